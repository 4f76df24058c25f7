"""Workloads: several process traces plus the address ranges they share.

A workload is what the simulator runs: processes (each a re-openable stream of
:class:`~calibration.traces.Chunk`) and *shared ranges* (address intervals shared between
named processes, e.g. a database's shared-memory segment or kernel data).  An address
outside every shared range of its process is **private** to that process, even when
another process uses the same virtual address (as after ``fork``: copy-on-write
look-alikes are everywhere in real multi-process traces).

Manifest (TOML), paths relative to the manifest::

    name = "two-greps"
    [[process]]
    name = "grep-1"
    trace = "grep1.npz"          # lackey, din or npz; format detected from content
    [[process]]
    name = "grep-2"
    trace = "grep2.lackey"
    format = "lackey"            # optional
    [[shared]]
    name = "shm"
    start = 0x40000000           # bytes, end exclusive
    end = 0x40100000
    processes = ["grep-1", "grep-2"]   # or "all"
    kernel = false               # references in the range count as operating system
    [[structure]]                # optional: a named data structure inside a shared range
    name = "q_multi"             # (several tables may share a name: its pieces)
    start = 0x40000000
    end = 0x40008000
    [recording]                  # optional: how the traces were made (kept in meta)
    program = "fft"
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator

import numpy as np

from mva.errors import ModelError
from mva.tomlcompat import tomllib

from .traces import Chunk, TraceError, npz_length, read_trace

__all__ = ["SharedRange", "Structure", "Process", "Workload", "read_manifest", "trace_workload", "PAGE"]

#: The virtual-memory page of the traced programs, bytes (x86-64 Linux).
PAGE = 4096


@dataclass(frozen=True)
class SharedRange:
    """Bytes ``[start, end)`` shared by ``processes`` (names); ``kernel`` marks operating
    system data (references to it count as kernel references)."""

    name: str
    start: int
    end: int
    processes: tuple
    kernel: bool = False


@dataclass(frozen=True)
class Structure:
    """Bytes ``[start, end)`` of the data structure ``name`` (one piece of it: a
    structure allocated in several blocks has one entry per block), e.g. so that basic
    proxies can be aimed at it (Talbot & Kelly, Table 1.3)."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Process:
    """A process: ``open()`` returns a fresh iterator over its references (the simulator
    reopens it when a run needs more references than the trace holds); ``length`` is the
    number of references if known."""

    name: str
    open: Callable[[], Iterator[Chunk]]
    length: int | None = None


@dataclass(frozen=True)
class Workload:
    """Processes and the ranges they share; ``default_references`` is the run length the
    workload was made for (None: the sum of the trace lengths); ``structures`` the named
    data structures (:class:`Structure`) inside the shared ranges."""

    name: str
    processes: tuple
    shared: tuple = ()
    default_references: int | None = None
    description: str = ""
    meta: dict = field(default_factory=dict, compare=False)
    structures: tuple = ()

    def __post_init__(self):
        if not self.processes:
            raise ModelError("process", "a workload needs at least one process")
        names = [p.name for p in self.processes]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ModelError("process.name", f"duplicate process name(s): {', '.join(sorted(dup))}")
        for r in self.shared:
            if r.end <= r.start:
                raise ModelError(f"shared[{r.name}]", f"end {r.end:#x} must be above start {r.start:#x}")
            unknown = [n for n in r.processes if n not in names]
            if unknown:
                raise ModelError(f"shared[{r.name}].processes", f"unknown process(es): {', '.join(unknown)}")

    def ranges_for(self, pid: int):
        """Shared ranges of process ``pid`` as arrays (start, end, tag) for the kernels;
        the tag of range ``r`` is ``len(processes) + r`` (process ids are the private tags)."""
        name = self.processes[pid].name
        rows = [(r.start, r.end, len(self.processes) + k) for k, r in enumerate(self.shared) if name in r.processes]
        return (np.array([r[0] for r in rows], dtype=np.uint64), np.array([r[1] for r in rows], dtype=np.uint64),
                np.array([r[2] for r in rows], dtype=np.int64))

    def structure_ranges(self, names, field_name: str = "structures") -> list:
        """``[(start, end), ...]`` of every piece of the structures ``names``; a
        :class:`ModelError` naming ``field_name`` for a name the workload lacks."""
        known = dict.fromkeys(s.name for s in self.structures)
        missing = [n for n in names if n not in known]
        if missing:
            have = ", ".join(known) if known else "none (its manifest has no [[structure]])"
            raise ModelError(field_name, f"{self.name} has no structure {', '.join(missing)}; it has {have}")
        return [(s.start, s.end) for s in self.structures if s.name in names]

    def kernel_ranges_for(self, pid: int):
        name = self.processes[pid].name
        return [(r.start, r.end) for r in self.shared if r.kernel and name in r.processes]

    @property
    def references(self) -> int | None:
        if self.default_references is not None:
            return self.default_references
        lengths = [p.length for p in self.processes]
        return None if any(n is None for n in lengths) else int(sum(lengths))


def _trace_length(path: Path, fmt: str | None) -> int | None:
    """References in a trace when its header says (npz); None for text traces."""
    if (fmt or "").lower() == "npz" or str(path).endswith(".npz"):
        return npz_length(path)
    return None


def trace_workload(path, fmt: str | None = None, name: str | None = None) -> Workload:
    """A one-process workload from a single trace file."""
    path = Path(path)
    read_trace(path, fmt)   # checks existence and format now, not mid-run
    return Workload(name or path.stem, (Process(path.stem, lambda: read_trace(path, fmt), _trace_length(path, fmt)),))


def read_manifest(path) -> Workload:
    """Load a workload manifest (TOML, see the module docstring)."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModelError(str(path), f"cannot read manifest ({exc})") from None
    unknown = set(doc) - {"name", "process", "shared", "structure", "references", "description", "recording"}
    if unknown:
        raise ModelError(f"{path}", f"unknown key(s) {', '.join(sorted(unknown))}; expected name, process, "
                                    "shared, structure, references, description, recording")
    if not isinstance(doc.get("recording", {}), dict):
        raise ModelError("recording", "must be a table ([recording] in TOML)")
    for key in ("process", "shared", "structure"):
        if not isinstance(doc.get(key, []), list) or not all(isinstance(e, dict) for e in doc.get(key, [])):
            raise ModelError(key, f"must be a list of tables ([[{key}]] in TOML)")
    procs = [_manifest_process(path, f"process[{k}]", entry) for k, entry in enumerate(doc.get("process", []))]
    if not procs:
        raise ModelError(f"{path}", "a manifest needs at least one [[process]] with a trace")
    names = tuple(p.name for p in procs)
    shared = [_manifest_range(f"shared[{k}]", k, entry, names) for k, entry in enumerate(doc.get("shared", []))]
    refs = doc.get("references")
    if refs is not None and (not isinstance(refs, int) or refs <= 0):
        raise ModelError("references", "must be a positive integer")
    structures = tuple(_manifest_structure(f"structure[{k}]", entry) for k, entry in enumerate(doc.get("structure", [])))
    return Workload(str(doc.get("name", path.stem)), tuple(procs), tuple(shared), refs,
                    str(doc.get("description", "")), {"recording": dict(doc.get("recording", {}))}, structures)


def _manifest_process(path: Path, where: str, entry: dict) -> Process:
    """One ``[[process]]`` table: its trace (relative to the manifest) checked readable."""
    for key in ("name", "trace", "format"):
        if key in entry and not isinstance(entry[key], str):
            raise ModelError(f"{where}.{key}", f"must be a string, got {entry[key]!r}")
    extra = set(entry) - {"name", "trace", "format"}
    if extra:
        raise ModelError(where, f"unknown key(s) {', '.join(sorted(extra))}; expected name, trace, format")
    if entry.get("format") not in (None, "lackey", "din", "npz"):
        raise ModelError(f"{where}.format", f"unknown format {entry['format']!r}; choose lackey, din or npz")
    if "trace" not in entry:
        raise ModelError(f"{where}.trace", "missing (a lackey, din or npz file)")
    trace = (path.parent / entry["trace"]).resolve()
    fmt = entry.get("format")
    if not trace.is_file():
        raise ModelError(f"{where}.trace", f"no such file: {trace}")
    try:
        read_trace(trace, fmt)
    except TraceError as exc:
        raise ModelError(f"{where}.trace", exc.problem) from None
    return Process(str(entry.get("name", trace.stem)), (lambda t=trace, f=fmt: read_trace(t, f)),
                   _trace_length(trace, fmt))


def _addresses(where: str, entry: dict) -> None:
    """``start`` and ``end`` of a table are byte addresses, ``end`` above ``start``."""
    for key in ("start", "end"):
        if not isinstance(entry.get(key), int) or isinstance(entry[key], bool) or not 0 <= entry[key] < 2 ** 64:
            raise ModelError(f"{where}.{key}", "must be a non-negative integer byte address")
    if entry["end"] <= entry["start"]:
        raise ModelError(f"{where}.end", f"end {entry['end']:#x} must be above start {entry['start']:#x}")


def _manifest_structure(where: str, entry: dict) -> Structure:
    """One ``[[structure]]`` table: a name and byte addresses."""
    extra = set(entry) - {"name", "start", "end"}
    if extra:
        raise ModelError(where, f"unknown key(s) {', '.join(sorted(extra))}; expected name, start, end")
    if not isinstance(entry.get("name"), str) or not entry["name"]:
        raise ModelError(f"{where}.name", "must be a non-empty string")
    _addresses(where, entry)
    return Structure(entry["name"], int(entry["start"]), int(entry["end"]))


def _manifest_range(where: str, k: int, entry: dict, names: tuple) -> SharedRange:
    """One ``[[shared]]`` table: byte addresses and member processes checked."""
    extra = set(entry) - {"name", "start", "end", "processes", "kernel"}
    if extra:
        raise ModelError(where, f"unknown key(s) {', '.join(sorted(extra))}; expected name, start, end, "
                                "processes, kernel")
    _addresses(where, entry)
    members = entry.get("processes", "all")
    if members != "all" and (not isinstance(members, list) or not all(m in names for m in members)):
        raise ModelError(f"{where}.processes", f"unknown process in {members!r}: must be \"all\" or a list "
                                               f"of process names ({', '.join(names)})")
    members = names if members == "all" else tuple(members)
    return SharedRange(str(entry.get("name", f"range{k}")), int(entry["start"]), int(entry["end"]), members,
                       bool(entry.get("kernel", False)))
