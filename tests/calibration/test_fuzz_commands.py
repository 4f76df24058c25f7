"""Fuzzing every command line of the project (issue #33): `mva simulate` on each machine,
`mva trace reuse/convert/stats`, `mva solve --method simulation`, a file of every model
kind, and the study modules.  Each run either succeeds, printing no ``nan`` or ``inf``
as a result, or exits 2 with one line on stderr; nothing else (no traceback, no other
status).

CI runs ``FUZZ_EXAMPLES`` examples per test (default 25; the studies a quarter of
that, at least 3); ``FUZZ_EXAMPLES=250`` runs ten times as many.  Values that would
make a valid run long (cycles, references) are drawn small or invalid: a long valid run
is no bug.
"""
import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.sim.registry import MACHINES
from mva.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
FEW = settings(max_examples=max(3, EXAMPLES // 4), deadline=None, suppress_health_check=list(HealthCheck))
NOT_A_RESULT = re.compile(r"(?<![\w.-])(nan|inf|-inf)(?![\w.-])", flags=re.I)

HOSTILE = ["0", "-1", "-5", "1", "3", "7", "1e300", "1e-300", "nan", "inf", "x", "", "4398046511104", "2^70",
           "1180591620717411303424", "0.5", "64", "4KiB", "1TiB", "512GiB", "-1KiB", "true", "all", "mesi"]
LONG_RUNS = {"cycles", "warmup", "references", "time_slice"}      # long when valid and large


def run(args, runner=None) -> tuple[int, str, str]:
    """Run a command line in this process: its status, stdout and stderr, checked."""
    import warnings

    from mva.cli import _one_line_warning

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.showwarning = _one_line_warning     # as the command shows them: one line each
        try:
            status = (runner or main)(args)
        except SystemExit as stop:          # argparse's usage errors in the study modules
            status = stop.code
    text, printed = err.getvalue(), out.getvalue()
    assert "Traceback" not in text, text
    assert status in (0, 2), (args, status, text[-500:])
    if status == 2:
        lines = [line for line in text.splitlines() if ": warning:" not in line and ": note:" not in line]
        assert len(lines) == 1, (args, text)
    else:
        bad = NOT_A_RESULT.findall(printed)
        assert not bad, (args, bad, printed[-2000:])
    return status, printed, text


def _option_values(machine: str):
    """Pairs (--option, value) of ``machine``'s options, hostile values included."""
    names = sorted(MACHINES[machine].options())
    safe_long = st.sampled_from(["0", "-1", "x", "1e300", "1000", "2000"])

    def pair(name):
        values = safe_long if name in LONG_RUNS else st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6))
        return values.map(lambda v, n=name: ("--" + n.replace("_", "-"), v))
    return st.sampled_from(names).flatmap(pair)


WORKLOADS = {"bus": ["data/traces/ls-head.din", "db"], "cmt": ["data/traces/ls.npz"],
             "svm": ["fft", "water"], "ccnuma": ["ge", "transpose"]}
SMALL = {"bus": ["--references", "3000"], "cmt": ["--cycles", "20000", "--warmup", "1000"],
         "svm": ["--nodes", "4", "--references", "2000"], "ccnuma": ["--nodes", "4", "--references", "2000"]}


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_simulate(machine):
    @FUZZ
    @given(st.lists(_option_values(machine), max_size=3), st.sampled_from(WORKLOADS[machine]), st.booleans())
    def case(options, workload, as_json):
        argv = ["simulate", "--machine", machine, workload, *SMALL[machine], "--quiet"]
        for flag, value in options:
            if flag in argv:
                continue
            argv += [f"{flag}={value}"] if value.startswith("-") else [flag, value]
        run(argv + (["--format", "json"] if as_json else []))
    case()


TRACE_OPTIONS = {
    "reuse": [("--block", ["64", "0", "-1", "3", "1180591620717411303424", "x"]),
              ("--sample", ["1e-6", "0", "2", "0.5", "nan", "-1", "0.01"]),
              ("--sizes", ["4KiB", "0", "x", "1,2", "4KiB,1TiB", "-4KiB", ""]),
              ("--trace-format", ["din", "lackey", "npz"]), ("--seed", ["-1", "0", "5"])],
    "convert": [("--skip", ["-5", "0", "10", "99999999"]), ("--limit", ["0", "-1", "5", "100"]),
                ("--trace-format", ["din", "lackey", "npz"]), ("--din-size", ["0", "-1", "4", "70000"])],
    "stats": [("--block", ["32", "0", "-1", "3", "x"]), ("--references", ["0", "-1", "1000"])],
}
TRACES = ["data/traces/ls-head.din", "data/traces/ls-head.lackey", "data/traces/ls.npz", "db", "missing.npz",
          "data/examples/cmt-mix.toml"]


@pytest.mark.parametrize("command", sorted(TRACE_OPTIONS))
def test_trace(command, tmp_path):
    flags = TRACE_OPTIONS[command]
    if command == "convert":
        flags = [f for f in flags if f[0] != "--trace-format"] + [("--format", ["din", "lackey", "npz"])]

    @FUZZ
    @given(st.lists(st.sampled_from(range(len(flags))).flatmap(
        lambda i: st.sampled_from(flags[i][1]).map(lambda v, i=i: (flags[i][0], v))), max_size=3),
        st.sampled_from(TRACES), st.integers(0, 10 ** 6))
    def case(options, trace, tag):
        argv = ["trace", command, trace]
        if command == "convert":
            argv += ["-o", str(tmp_path / f"out-{tag}.npz")]
        for flag, value in dict(options).items():
            argv += [f"{flag}={value}"]
        run(argv)
    case()


SIMULATION = [("--events", ["1", "10", "20000", "-5", "99999999999999", "30000"]),
              ("--seed", ["-1", "0", "7", "4294967296"]), ("--replications", ["0", "1", "2", "3"]),
              ("--precision", ["0", "1", "0.5", "0.2", "nan", "-1"]), ("--confidence", ["0", "1", "0.9", "2"]),
              ("--precision-target", ["auto", "throughput", "response_time", "speed", "tpmC"]),
              ("--set", ["network.population=[0, 0]", "network.population=[200000, 1]",
                         "station.cpu.demand=[0, 0]", "station.cpu.scv=1e300", "station.cpus.servers=1000000000000"])]


@FUZZ
@given(st.lists(st.sampled_from(range(len(SIMULATION))).flatmap(
    lambda i: st.sampled_from(SIMULATION[i][1]).map(lambda v, i=i: (SIMULATION[i][0], v))), max_size=4),
    st.sampled_from(["data/examples/two-class.toml", "data/examples/mixed.json"]), st.booleans())
def test_solve_by_simulation(options, network, sweep):
    argv = ["solve", network, "--method", "simulation"]
    given_options = dict(options)
    given_options.setdefault("--events", "20000")
    if "--precision" in given_options:
        argv += ["--events", "20000"] if "--events" not in given_options else []
    for flag, value in given_options.items():
        argv += [flag, value]
    if sweep:
        argv += ["--sweep", "network.population[0]=1,2", "--format", "csv"]
    run(argv)


KIND_FILES = {"network": "data/examples/ten-stations.toml", "tpcc_smp": "data/tpcc/c2.toml",
              "shared_bus": "data/examples/shared-bus.toml"}
PARAMETER_VALUES = ["0", "-1", "1e-320", "1e300", "nan", "[]", "[0]", "[1, 2]", '"x"', "true", "0.5", "[[0]]"]


def _kind_parameters(kind):
    from mva.modelkind import load_model_kind

    return [p.name for p in load_model_kind(kind).parameters()]


def _kind_file(kind, folder: Path) -> Path:
    """A file of ``kind``: the repository's example, or one written from a small run."""
    import tomli_w

    if kind in KIND_FILES:
        return ROOT / KIND_FILES[kind]
    path = folder / f"{kind}.toml"
    if kind == "ccnuma":
        from calibration.profiles.ccnuma import model_document
        from calibration.sim.ccnuma import simulate_ccnuma
        from calibration.sim.parallel import parallel_kernel

        doc = model_document(simulate_ccnuma(parallel_kernel("ge", processes=4, size=32)), "ge4")
    elif kind == "svm_cluster":
        from calibration.profiles.svm_cluster import application_values, model_document, simulate_pair
        from calibration.sim.parallel import parallel_kernel

        doc = model_document(application_values(*simulate_pair(parallel_kernel("fft", processes=4, size=64))), "fft4")
    else:
        doc = {"kind": kind}
    path.write_text(tomli_w.dumps(doc))
    return path


@pytest.mark.parametrize("kind", ["tpcc_smp", "shared_bus", "cmt_core", "ccnuma", "svm_cluster"])
def test_model_kind_files(kind, tmp_path):
    names = _kind_parameters(kind)
    path = _kind_file(kind, tmp_path)

    @FUZZ
    @given(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(PARAMETER_VALUES)), max_size=2))
    def case(sets):
        argv = ["solve", str(path)]
        for name, value in sets:
            argv += ["--set", f"{name}={value}"]
        run(argv)
    case()


def _study(name):
    import importlib

    return importlib.import_module(f"calibration.studies.{name}").main


STUDIES = {
    "ccnuma": (["--small", "--nodes", "4", "--kernels", "ge", "--processes", "1"],
               [("--nodes", ["0", "-1", "3", "100", "x"]), ("--kernels", ["ge", "bogus", "", ",,"]),
                ("--processes", ["0", "-1", "1"]), ("--results", ["/missing/x.md"]), ("--bogus", ["1"])]),
    "svm": (["--small", "--nodes", "4", "--kernels", "fft", "--processes", "1", "--events", "20000"],
            [("--events", ["0", "1", "-5", "99999999999999"]), ("--nodes", ["0", "-1", "x"]),
             ("--plot", ["/missing/x.png", "x.xyz"]), ("--kernels", ["bogus"])]),
    "cmt": (["--small", "--groups", "1", "--cycles", "50000"],
            [("--cycles", ["0", "-5", "x", "1e300"]), ("--slice", ["0", "-1", "x"]), ("--groups", ["0", "-1", "x"]),
             ("--traces", ["/missing", "data/traces/ls.npz"]), ("--method", ["avg", "comb", "x"]),
             ("--csv", ["/missing/dir/p"])]),
}


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_study_modules(study):
    base, options = STUDIES[study]

    @FEW
    @given(st.lists(st.sampled_from(range(len(options))).flatmap(
        lambda i: st.sampled_from(options[i][1]).map(lambda v, i=i: (options[i][0], v))), min_size=1, max_size=2))
    def case(chosen):
        argv = list(base)
        for flag, value in dict(chosen).items():
            if flag in argv:
                at = argv.index(flag)
                argv[at + 1] = value
            else:
                argv += [flag, value]
        run(argv, _study(study))
    case()


# --- every option of every study and report (issue #75) ----------------------------------
class _WorkStarted(Exception):
    """Raised where an entry point's long work would begin: its options were accepted."""


def _stop(*_args, **_kwargs):
    raise _WorkStarted


#: Every ``python -m`` entry point with options, and where its work begins (patched to stop
#: there, so a value that is valid does not start an hour-long study).
ENTRY_POINTS = {
    "calibration.studies.ccnuma": ("run_study",), "calibration.studies.cmt": ("run_study",),
    "calibration.studies.shared_bus": ("run_study",), "calibration.studies.svm": ("run_study",),
    "calibration.studies.tpcc": ("run_study",), "calibration.studies.tpcc_cpu_centre": ("run_study",),
    "calibration.studies.tpcc_postgres": ("run_study",), "calibration.studies.tpcw": ("run_study",),
    "calibration.profiles.tpcc_postgres": ("profile",), "models.tpcc_smp.report": ("reproduce",),
    "models.tpcc_smp.validation": ("validate", "what_if_effects"), "mva.validation": ("study",),
}
BAD_VALUES = ["x", "", "0", "-1", "-5", "nan", "inf", "1e300", "0.5", "1.5", "4:1", ",", "1,1", "abc:def", "true",
              "/missing/dir/f.csv", "data", "99999999999999999999"]


def _parser_of(module):
    """The argparse parser ``module.main`` builds (caught as it parses)."""
    import argparse
    from unittest import mock

    caught = {}

    def grab(self, *args, **kwargs):
        caught["parser"] = self
        raise _WorkStarted

    with mock.patch.object(argparse.ArgumentParser, "parse_args", grab):
        with pytest.raises(_WorkStarted):
            module.main([])
    return caught["parser"]


def _stopping_run_study(real):
    def run_study(parser, argv, kernels, body, *args, **kwargs):
        return real(parser, argv, kernels, _stop, *args, **kwargs)
    return run_study


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_option_of_every_entry_point(name, monkeypatch):
    """Each option given a hostile value (one to three at once): exit 2 with one line, or
    accepted before any work; never a traceback, another status, or work begun on a bad
    value that only fails later."""
    import importlib

    module = importlib.import_module(name)
    parser = _parser_of(module)
    for target in ENTRY_POINTS[name]:
        real = getattr(module, target)
        monkeypatch.setattr(module, target, _stopping_run_study(real) if target == "run_study" else _stop)
    flags, valued, positional = [], [], []
    for action in parser._actions:
        if not action.option_strings:
            positional.append(action)
        elif action.nargs == 0:
            if "-h" not in action.option_strings:
                flags.append(action.option_strings[-1])
        else:
            valued.append(action)
    assert valued, f"{name} has no options to fuzz"

    def values(action):
        return st.sampled_from(BAD_VALUES + list(action.choices or ())).map(
            lambda v, a=action: (a.option_strings[-1], v))

    @FEW
    @given(st.lists(st.one_of(st.sampled_from(valued).flatmap(values), st.sampled_from(flags or ["--help"]).map(
        lambda f: (f, None))), min_size=1, max_size=3), st.sampled_from(BAD_VALUES))
    def case(options, first):
        argv = [first] * len(positional)
        for flag, value in dict(options).items():
            if flag == "--help":
                continue
            argv += [flag] if value is None else [f"{flag}={value}"]
        try:
            run(argv, module.main)
        except _WorkStarted:
            pass
    case()


def test_the_entry_point_list_is_complete():
    """A new ``python -m`` command line is fuzzed as soon as it exists."""
    found = set()
    for folder in ("calibration", "models", "mva"):
        for path in (ROOT / folder).rglob("*.py"):
            if re.search(r"^def main\(", path.read_text(), flags=re.M):
                found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    assert found - {"mva.cli"} == set(ENTRY_POINTS)


CALIBRATE_OPTIONS = [("--fit", ["station.cpu.demand=0:1", "station.cpu.demand=1:0", "nosuch", "=", "x=a:b",
                                "station.cpu.demand=-1:inf"]),
                     ("--holdout-rows", ["8,9", "x", "-1", "99", "", "0,0"]),
                     ("--level", ["0.9", "0", "1", "1.5", "nan", "x"]),
                     ("--loss", ["linear", "huber", "x"]), ("--loss-scale", ["0.1", "0", "-1", "inf", "nan"]),
                     ("--write", ["/missing/dir/x.toml"]), ("--demands", [None]), ("--background", [None])]


@FEW
@given(st.lists(st.sampled_from(range(len(CALIBRATE_OPTIONS))).flatmap(
    lambda i: st.sampled_from(CALIBRATE_OPTIONS[i][1]).map(lambda v, i=i: (CALIBRATE_OPTIONS[i][0], v))), max_size=3),
    st.booleans())
def test_calibrate(options, with_model):
    files = (["data/examples/calibration/network.toml"] if with_model else []) + \
        ["data/examples/calibration/observations.csv"]
    argv = ["calibrate", *files]
    for flag, value in dict(options).items():
        argv += [flag] if value is None else [f"{flag}={value}"]
    run(argv)


def _subcommand_options(*path):
    """The value-taking options and flags of ``mva PATH...`` (from the parser itself, so a
    new option is fuzzed as soon as it exists)."""
    import argparse

    from mva.cli import build_parser

    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    valued = [a.option_strings[-1] for a in parser._actions if a.option_strings and a.nargs != 0]
    flags = [a.option_strings[-1] for a in parser._actions if a.option_strings and a.nargs == 0
             and a.option_strings[-1] != "--help"]
    return valued, flags


#: Values that would make a valid run long (many events, a large sweep), kept small.
SHORT_VALUES = ["0", "-1", "x", "", "nan", "1", "2", "0.5", "1e300", "/missing/dir/f"]
SOLVE_FILES = ["data/examples/two-class.toml", "data/examples/mixed.json", "data/tpcc/c2.toml",
               "data/examples/shared-bus.toml"]


@contextlib.contextmanager
def _in_scratch_folder():
    """Run in a new empty folder: an option's value that is a valid relative name (``-o 1``)
    writes there, not into the checkout."""
    import tempfile

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield Path(folder)
        finally:
            os.chdir(here)


@FUZZ
@given(st.sampled_from(SOLVE_FILES), st.data())
def test_every_option_of_mva_solve(path, data):
    """Every option of ``mva solve`` (hostile values, one to three at once) on network and
    model files; the sweeps and simulations stay small."""
    path = str(ROOT / path)
    valued, flags = _subcommand_options("solve")
    chosen = data.draw(st.lists(st.one_of(st.sampled_from(valued).map(lambda o: (o, "value")),
                                          st.sampled_from(flags).map(lambda f: (f, None))), min_size=1, max_size=3))
    argv = ["solve", path, "--events", "20000"]
    for flag, kind in dict(chosen).items():
        if flag == "--events":
            continue
        if kind is None:
            argv.append(flag)
            continue
        value = data.draw(st.sampled_from(SHORT_VALUES + ["cpus=1,2", "network.population[0]=1,2", "tpmC>=50",
                                                          "throughput>1", "simulation", "linearizer", "csv"]))
        argv.append(f"{flag}={value}")
    with _in_scratch_folder():
        run(argv)


@FUZZ
@given(st.data(), st.integers(0, 10 ** 6))
def test_every_option_of_mva_trace_generate(tmp_path_factory, data, tag):
    valued, flags = _subcommand_options("trace", "generate")
    folder = tmp_path_factory.mktemp("generate")
    chosen = data.draw(st.lists(st.sampled_from(valued + flags), max_size=3, unique=True))
    argv = ["trace", "generate", data.draw(st.sampled_from(["ec-server", "ls", "nosuch", ""]))]
    if "--output" not in chosen:
        argv += ["--output", str(folder / f"w{tag}")]
    if "--references" not in chosen:
        argv += ["--references", "5000"]
    for flag in chosen:
        argv += [flag] if flag in flags else [f"{flag}={data.draw(st.sampled_from(SHORT_VALUES + ['3000']))}"]
    with _in_scratch_folder():
        run(argv)
