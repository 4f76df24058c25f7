"""The machine registry: ``mva simulate`` derives its options, refusals and sweeps from
:data:`calibration.sim.MACHINES`, so every machine sweeps and a new machine registered
with one entry gets the command line for free."""
import json
from dataclasses import asdict, dataclass

import pytest

from calibration.sim import MACHINES, Machine, register
from calibration.sim.options import option
from mva.cli import main


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("machine, workload, extra, sweep, key", [
    ("bus", "ec-server", ["--references", "50000"], "cpus=1,2", "cpus"),
    ("cmt", "data/traces/perl-excerpt.npz", ["--cycles", "50000", "--warmup", "0"], "l2=96KiB,384KiB", "l2"),
    ("svm", "fft", ["--nodes", "4", "--references", "5000"], "home=first-touch,round-robin", "home"),
    ("ccnuma", "ge", ["--nodes", "4"], "proxies=none,basic", "proxies"),
])
def test_every_machine_sweeps_an_option(machine, workload, extra, sweep, key, capsys):
    argv = ["simulate", workload, "--machine", machine, *extra, "--sweep", sweep, "--quiet"]
    assert main([*argv, "--format", "json"]) == 0
    rows = _json_lines(capsys.readouterr().out)
    values = sweep.partition("=")[2].split(",")
    assert [str(r["case"][key]) for r in rows] == values
    configs = [r["config"][key] for r in rows]
    assert len(set(map(str, configs))) == 2            # the swept value reached the machine
    assert rows[0] != rows[1]
    assert main(argv) == 0                              # the table: one header and one row per case
    table = capsys.readouterr().out.splitlines()
    assert len(table) == 3 and table[0].split()[0] == key
    assert [line.split()[0] for line in table[1:]] == values


def test_an_option_of_another_machine_is_refused_naming_its_machines(capsys):
    assert main(["simulate", "ge", "--machine", "ccnuma", "--cores", "2"]) == 2
    assert capsys.readouterr().err.strip() == "mva: --cores: applies to --machine cmt only"
    assert main(["simulate", "ec-server", "--sweep", "proxies=none,basic"]) == 2
    assert "--sweep proxies: not an option of --machine bus" in capsys.readouterr().err
    assert main(["simulate", "ec-server", "--sweep", "cpus=0,2"]) == 2           # the field named as written
    assert capsys.readouterr().err.strip().startswith("mva: --sweep cpus: must be a positive integer")
    assert main(["simulate", "ec-server", "--cpus", "two"]) == 2
    assert capsys.readouterr().err.strip() == "mva: --cpus: expected an integer, got 'two'"


@dataclass(frozen=True)
class ToyConfig:
    """A machine that does one thing: ``speed`` references a cycle."""

    speed: int = option(2, "references per cycle (default 2)", "references per cycle")
    mode: str = option("fast", "how it runs (default fast)", kind="choice", choices=("fast", "slow"))
    references: int | None = option(None, "references of the run (default: the workload's)", "references")

    def __post_init__(self):
        if self.speed < 1:
            from mva.errors import ModelError
            raise ModelError("speed", "must be at least 1")

    def to_dict(self):
        return asdict(self)


@dataclass(frozen=True)
class ToyResult:
    workload: str
    config: dict
    cycles: int

    def to_dict(self):
        return asdict(self)


def _toy_simulate(workload, config, progress=False):
    refs = config.references or sum(p.length or 0 for p in workload.processes)
    return ToyResult(workload.name, config.to_dict(), refs // config.speed * (2 if config.mode == "slow" else 1))


@pytest.fixture
def toy_machine():
    machine = register(Machine("toy", "a test machine", ToyConfig, _toy_simulate,
                               lambda d: f"{d['workload']}: {d['cycles']} cycles", lambda d: {"cycles": d["cycles"]}))
    yield machine
    del MACHINES["toy"]


def test_a_new_machine_gets_the_command_line_from_one_entry(toy_machine, capsys):
    assert main(["simulate", "ec-server", "--references", "1000", "--machine", "toy", "--speed", "4"]) == 0
    assert capsys.readouterr().out.strip() == "ec-server: 250 cycles"
    assert main(["simulate", "ec-server", "--references", "1000", "--machine", "toy", "--sweep", "mode=fast,slow",
                 "--format", "json"]) == 0
    assert [r["cycles"] for r in _json_lines(capsys.readouterr().out)] == [500, 1000]
    assert main(["simulate", "ec-server", "--machine", "toy", "--cpus", "4"]) == 2
    assert "--cpus: applies to --machine bus only" in capsys.readouterr().err
    assert main(["simulate", "ec-server", "--machine", "toy", "--speed", "0"]) == 2
    assert capsys.readouterr().err.strip() == "mva: --speed: must be at least 1"
    assert main(["simulate", "ec-server", "--machine", "bus", "--speed", "3"]) == 2
    assert "--speed: applies to --machine toy only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    assert "--machine toy: a test machine" in capsys.readouterr().out
    with pytest.raises(ValueError, match="already registered"):
        register(toy_machine)


def test_every_machine_declares_its_options():
    for machine in MACHINES.values():
        opts = machine.options()
        assert opts and "references" in opts, machine.name
        for name, opt in opts.items():
            assert opt.help and "default" in opt.help or opt.kind == "flag", (machine.name, name)
        machine.config()                                   # the defaults make a valid machine
