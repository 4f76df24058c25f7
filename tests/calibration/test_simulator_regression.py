"""The simulator's counts do not drift: digests of every counter of 30 fixed runs (MESI,
AMSD, PSCR x random, affinity scheduling x 1, 2, 4, 8, 16 processors; checking mode on
at 4) were recorded by the simulator before it became the ``calibration.sim`` package
(commit 02bd71b) and must be reproduced bit for bit."""
import hashlib
import json
from pathlib import Path

import pytest

from calibration import generate, simulate_bus

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "simulator_counts.json").read_text())


@pytest.fixture(scope="module")
def workload():
    return generate("ec-server", references=300_000)


def digest(result) -> str:
    counts = dict(result.counts)
    counts.update(cycles=result.cycles, bus_busy=result.bus_busy, blocks=result.blocks, stall=result.stall.tolist())
    return hashlib.sha256(json.dumps(counts, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize("run", sorted(RECORDED))
def test_counts_are_bit_identical_to_the_recorded_runs(workload, run):
    protocol, scheduler, cpus = run.split("-")
    result = simulate_bus(workload, cpus=int(cpus), protocol=protocol, scheduler=scheduler, cache="256KiB", block=64,
                      time_slice=20000, references=300_000, check=(int(cpus) == 4))
    assert digest(result) == RECORDED[run]
