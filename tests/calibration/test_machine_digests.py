"""The cc-NUMA, SVM and CMT machines' counts do not drift: digests of every counter of a
fixed set of runs (several kernels and options per machine) were recorded by commit
``record digests`` before the machines moved into the registry, and must be reproduced bit
for bit, as the bus machine's are (``test_simulator_regression.py``).

Run ``python tests/calibration/test_machine_digests.py`` to print the digests of the current code
(``--write`` records them; only after a change meant to alter the counts, said in the
commit)."""
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parents[1] / "data"


def _ccnuma_runs():
    from calibration.sim.ccnuma import CCNUMAConfig, simulate_ccnuma
    from calibration.sim.parallel import parallel_kernel

    cases = {
        "ge-4-ft-none": ("ge", 4, 32, {}),
        "ge-8-rr-basic": ("ge", 8, 64, {"placement": "round-robin", "proxies": "basic"}),
        "ge-8-ft-reactive-2": ("ge", 8, 64, {"proxies": "reactive", "buffer": 2}),
        "ocean-contig-4-ft-none-check": ("ocean-contig", 4, 32, {"check": True}),
        "ocean-noncontig-4-rr-none": ("ocean-noncontig", 4, 32, {"placement": "round-robin"}),
        "transpose-8-ft-basic-buffer-4": ("transpose", 8, 64, {"proxies": "basic", "buffer": 4}),
        "transpose-4-naive-small-slc": ("transpose", 4, 64, {"initialisation": "none", "slc": 16 << 10,
                                                              "flc": 1 << 10}),
    }
    for name, (kernel, nodes, size, cfg) in cases.items():
        yield name, lambda k=kernel, n=nodes, s=size, c=cfg: simulate_ccnuma(
            parallel_kernel(k, processes=n, size=s), CCNUMAConfig(**c))


def _svm_runs():
    from calibration.sim.parallel import parallel_kernel
    from calibration.sim.svm import SVMConfig, simulate_svm

    cases = {
        "fft-4-hlrc": ("fft", 4, 64, {}),
        "fft-4-sc-1KiB": ("fft", 4, 64, {"protocol": "sc", "granularity": 1024}),
        "barnes-4-hlrc-rr": ("barnes", 4, 256, {"home": "round-robin"}),
        "barnes-restructured-4-sc-64": ("barnes-restructured", 4, 256, {"protocol": "sc", "granularity": 64}),
        "water-8-hlrc": ("water", 8, 64, {}),
        "water-restructured-4-sc-256-rr": ("water-restructured", 4, 64, {"protocol": "sc", "granularity": 256,
                                                                        "home": "round-robin"}),
    }
    free = {"communication": "ideal", "protocol_costs": "B"}     # the counts recorded before the machine kept time
    for name, (kernel, nodes, size, cfg) in cases.items():
        yield name, lambda k=kernel, n=nodes, s=size, c=cfg: simulate_svm(
            parallel_kernel(k, processes=n, size=s), SVMConfig(**c, **free))
    timed = {"barnes-4-hlrc-AO": ("barnes", 4, 256, {}),
             "water-4-sc-64-HO": ("water", 4, 64, {"protocol": "sc", "granularity": 64, "communication": "H"}),
             "fft-4-hlrc-WH-rr": ("fft", 4, 64, {"communication": "W", "protocol_costs": "H", "home": "round-robin"})}
    for name, (kernel, nodes, size, cfg) in timed.items():
        yield name, lambda k=kernel, n=nodes, s=size, c=cfg: simulate_svm(
            parallel_kernel(k, processes=n, size=s), SVMConfig(**c))


def _cmt_runs():
    from calibration.sim.cmt import CMTConfig, simulate_cmt
    from calibration.sim.synthetic import locality_thread
    from calibration.sim.workload import Workload

    threads = (("random", 64 << 10), ("stream", 1 << 20), ("random", 4 << 10), ("stream", 256 << 10),
               ("random", 2 << 20), ("stream", 32 << 10))
    wl = Workload("digest", tuple(locality_thread(f"{p}{k}", p, fp, 200_000, 0.3, seed=k + 1,
                                                  base=0x1000000 * (k + 1)) for k, (p, fp) in enumerate(threads)))
    base = {"cycles": 300_000, "warmup": 50_000, "time_slice": 100_000}
    cases = {
        "rr-1x4": {"schedule": "round-robin"},
        "rr-2x2-small-l2": {"schedule": "round-robin", "cores": 2, "contexts": 2, "l2": 64 << 10, "l2_assoc": 4},
        "groups-1x4-slow-memory": {"schedule": ((0, 1, 2, 3), (2, 3, 4, 5)), "bandwidth": 0.5,
                                   "memory_latency": 300},
        "all-2x4-l1-16KiB": {"cores": 2, "contexts": 4, "l1": 16 << 10, "block": 32},
    }
    for name, cfg in cases.items():
        yield name, lambda c=cfg: simulate_cmt(wl, CMTConfig(**{**base, **c}))


MACHINES = {"ccnuma": _ccnuma_runs, "svm": _svm_runs, "cmt": _cmt_runs}


def digest(result) -> str:
    """sha256 (16 hex digits) of every counter and matrix of a run: its ``to_dict()``
    without the run time and the configuration echo, plus any array fields."""
    d = {k: v for k, v in result.to_dict().items() if k not in ("seconds", "config")}
    for name, value in vars(result).items():
        if isinstance(value, np.ndarray):
            d[name] = value.tolist()
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=int).encode()).hexdigest()[:16]


def _recorded(machine):
    return json.loads((DATA / f"{machine}_counts.json").read_text())


CASES = [(m, name) for m in MACHINES for name in _recorded(m)]


@pytest.mark.parametrize("machine, run", CASES, ids=[f"{m}-{r}" for m, r in CASES])
def test_counts_are_bit_identical_to_the_recorded_runs(machine, run):
    runs = dict(MACHINES[machine]())
    assert digest(runs[run]()) == _recorded(machine)[run]


def test_every_defined_run_is_recorded():
    for machine, runs in MACHINES.items():
        assert sorted(name for name, _ in runs()) == sorted(_recorded(machine))


if __name__ == "__main__":                       # print (or --write) the digests of the current code
    for machine, runs in MACHINES.items():
        digests = {name: digest(run()) for name, run in runs()}
        print(machine, json.dumps(digests, indent=1))
        if "--write" in sys.argv:
            (DATA / f"{machine}_counts.json").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
