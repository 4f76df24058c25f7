"""Trace and workload statistics in the form of Foglia et al. 2004, Tables 1-3.

For each process and for the whole workload: references, distinct blocks (32 bytes by
default), code share (instruction fetches), data share and data-write share, shared
blocks (user data blocks referenced by two or more processes), shared-data access and
write shares, and the kernel share.  Shares are percentages of all references, as in
the paper.  Streams every trace once, with bounded memory.
"""
from __future__ import annotations

import numpy as np

from mva.errors import ModelError

from .blockmap import BlockMap
from .traces import CHUNK_REFERENCES, limited
from .workload import Workload

__all__ = ["workload_statistics", "STAT_COLUMNS", "format_statistics"]

STAT_COLUMNS = ("processes", "references", "distinct_blocks", "code", "data", "data_write", "shared_blocks",
                "shared_access", "shared_write", "kernel")


def workload_statistics(workload: Workload, block: int = 32, per_process: bool = False) -> dict:
    """Foglia et al. (2004) Table 1-3 statistics of ``workload`` (each process's trace read once;
    a generated process for its planned length).  With ``per_process`` the result has a
    ``processes_detail`` list with the same statistics per process."""
    first_pid = np.empty(0, dtype=np.int32)
    multi = np.empty(0, dtype=np.bool_)

    def grow(cap):
        nonlocal first_pid, multi
        fp = np.full(cap, -1, dtype=np.int32)
        fp[: first_pid.shape[0]] = first_pid
        mu = np.zeros(cap, dtype=np.bool_)
        mu[: multi.shape[0]] = multi
        first_pid, multi = fp, mu

    bm = BlockMap(workload, block, word=4, sets=1, pages="identity", on_grow=grow)
    out_block = np.empty(CHUNK_REFERENCES * 4, dtype=np.int32)
    out_info = np.empty(CHUNK_REFERENCES * 4, dtype=np.uint16)
    rows = []
    # per-access tallies over block references: [ifetch, load, store] x [user, kernel]
    totals = np.zeros((3, 2), dtype=np.int64)
    shared_refs = np.zeros(3, dtype=np.int64)
    for pid, proc in enumerate(workload.processes):
        tally = np.zeros((3, 2), dtype=np.int64)
        shared_tally = np.zeros(3, dtype=np.int64)
        seen = set()
        for chunk in limited(proc.open(), proc.length):
            done = 0
            while done < len(chunk):
                part = chunk.slice(done)
                consumed, written = bm.map(pid, part, out_block, out_info)
                done += consumed
                blocks = out_block[:written]
                access = (out_info[:written] & 3).astype(np.int64)
                kern = bm.attrs["is_kernel"][blocks].astype(np.int64)
                np.add.at(tally, (access, kern), 1)
                shared = (bm.attrs["owner"][blocks] < 0) & (kern == 0) & (access > 0)
                shared_tally += np.bincount(access[shared], minlength=3)
                ub = np.unique(blocks)
                seen.update(ub.tolist()) if per_process else None
                fp = first_pid[ub]
                fresh = fp < 0
                first_pid[ub[fresh]] = pid
                multi[ub[(~fresh) & (fp != pid)]] = True
        totals += tally
        shared_refs += shared_tally
        if per_process:
            rows.append(_row(proc.name, 1, tally, shared_tally, len(seen), None))
    n = bm.count
    if n == 0:
        raise ModelError(f"workload {workload.name}", "holds no references (an empty or unparsable trace)")
    owner = bm.attrs["owner"][:n]
    user_data = (owner < 0) & (bm.attrs["is_kernel"][:n] == 0) & (bm.attrs["is_code"][:n] == 0)
    shared_blocks = int((user_data & multi[:n]).sum())
    result = _row(workload.name, len(workload.processes), totals, shared_refs, n, shared_blocks)
    result["block"] = block
    if per_process:
        result["processes_detail"] = rows
    return result


def _row(name, processes, tally, shared_tally, distinct, shared_blocks):
    refs = max(int(tally.sum()), 1)
    pct = lambda x: 100.0 * float(x) / refs  # noqa: E731
    return {"name": name, "processes": processes, "references": int(tally.sum()), "distinct_blocks": int(distinct),
            "code": pct(tally[0].sum()), "data": pct(tally[1:].sum()), "data_write": pct(tally[2].sum()),
            "shared_blocks": shared_blocks, "shared_access": pct(shared_tally[1:].sum()),
            "shared_write": pct(shared_tally[2]), "kernel": pct(tally[:, 1].sum())}


def format_statistics(stats: dict) -> str:
    """A Table 1-3 style text table (one row per process with ``processes_detail``)."""
    head = (f"{'workload':<16} {'procs':>5} {'refs':>11} {'blocks':>9} {'code%':>6} {'data%':>6} {'write%':>6} "
            f"{'shared blk':>10} {'sh.acc%':>7} {'sh.wr%':>6} {'kernel%':>7}")
    lines = [f"statistics at {stats.get('block', 32)}-byte blocks (Foglia et al. 2004, Tables 1-3)", head]

    def line(r):
        sb = "" if r["shared_blocks"] is None else r["shared_blocks"]
        return (f"{r['name'][:16]:<16} {r['processes']:>5} {r['references']:>11} {r['distinct_blocks']:>9} "
                f"{r['code']:>6.2f} {r['data']:>6.2f} {r['data_write']:>6.2f} {sb!s:>10} {r['shared_access']:>7.2f} "
                f"{r['shared_write']:>6.2f} {r['kernel']:>7.2f}")

    for r in stats.get("processes_detail", []):
        lines.append(line(r))
    lines.append(line(stats))
    return "\n".join(lines)
