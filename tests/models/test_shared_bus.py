"""The shared-bus model: exact MVA in its product-form case, laws and bounds, the
profile interpolation, the model file, and calibration from simulator runs."""
from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from calibration import generate, simulate_bus
from calibration.profiles.shared_bus import model_from_runs, profile_from_runs
from models.shared_bus import SharedBus, solve_shared_bus
from models.shared_bus.model import interpolate
from mva import Network, Station, solve
from mva.cli import main
from mva.errors import ModelError


@pytest.mark.parametrize("cpus", [1, 2, 5, 12])
def test_product_form_case_equals_exact_mva(cpus):
    # exponential service, no non-stalling work: a delay (computing) and a queue (the bus)
    cpu_cycles, rate, cost = 5.0, 0.02, 60.0
    r = solve_shared_bus(cpus, cpu_cycles, rate, cost, 2 * cost ** 2)
    net = Network(name="bus", classes=("cpu",), population=(cpus,), think_time=(cpu_cycles / rate,),
                  stations=(Station("bus", "queue", (cost,)),))
    exact = solve(net)
    assert r["throughput"] * rate == pytest.approx(exact.throughput[0], rel=1e-10)
    assert r["bus_utilization"] == pytest.approx(exact.station_utilization()[0], rel=1e-10)


@settings(max_examples=60, deadline=None)
@given(cpus=st.integers(1, 32), cpu=st.floats(0.5, 20), rate=st.floats(1e-4, 0.2), cost=st.floats(1, 200),
       cv2=st.floats(0, 3), async_rate=st.floats(0, 0.1), async_cost=st.floats(0, 50),
       residual=st.floats(0.1, 10))
def test_laws_and_bounds(cpus, cpu, rate, cost, cv2, async_rate, async_cost, residual):
    r = solve_shared_bus(cpus, cpu, rate, cost, cost ** 2 * (1 + cv2), async_rate, async_cost,
                         async_cost ** 2 * 1.5, residual)
    # the bus is never busier than all the time; GSP between 0 and P
    assert 0 < r["bus_utilization"] <= 1 + 1e-9
    assert 0 < r["gsp"] <= cpus + 1e-9
    # response-time law per processor: P = X R (references per cycle times cycles per reference)
    assert r["throughput"] * r["response_time"] == pytest.approx(cpus, rel=1e-6)
    # asymptotic bounds: X <= P / (cpu + rate cost) and X <= 1 / (bus work per reference)
    assert r["throughput"] <= cpus / (cpu + rate * cost) * (1 + 1e-9)
    assert r["throughput"] <= 1 / (rate * cost + async_rate * async_cost) * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(cpus=st.integers(2, 32), low=st.floats(0.1, 5), step=st.floats(0.01, 5))
def test_more_residual_work_means_more_waiting(cpus, low, step):
    args = (cpus, 5.0, 0.01, 60.0, 4000.0, 0.005, 20.0, 500.0)
    a, b = solve_shared_bus(*args, low), solve_shared_bus(*args, low + step)
    assert b["bus_waiting"] >= a["bus_waiting"] - 1e-9 and b["gsp"] <= a["gsp"] + 1e-9
    # one processor with no non-stalling work never finds the bus busy: the factor cannot matter
    alone = (1, 5.0, 0.01, 60.0, 4000.0)
    assert solve_shared_bus(*alone, residual_factor=low)["gsp"] == pytest.approx(solve_shared_bus(*alone)["gsp"],
                                                                                  rel=1e-12)


def test_gsp_grows_with_processors_for_a_fixed_profile():
    gsp = [solve_shared_bus(n, 5.0, 0.01, 60.0, 4000.0, 0.005, 20.0, 500.0)["gsp"] for n in range(1, 25)]
    assert all(b >= a - 1e-9 for a, b in zip(gsp, gsp[1:], strict=False))


def test_profile_interpolation():
    assert interpolate(8, [2, 8], [1.0, 4.0]) == pytest.approx(4.0)
    assert interpolate(5, [2, 8], [1.0, 4.0]) == pytest.approx(2.5)
    assert interpolate(16, [2, 8], [1.0, 4.0]) == pytest.approx(8.0)                    # extrapolated
    assert interpolate(4, [2, 8], [1.0, 4.0], "log") == pytest.approx(2.5)              # log 4 halfway
    assert interpolate(16, [2, 8], [1.0, 4.0], "log") == pytest.approx(5.5)
    assert interpolate(3, [5], [7.0]) == 7.0


@settings(max_examples=40, deadline=None)
@given(a=st.tuples(st.floats(1e-4, 0.01), st.floats(-5e-4, 5e-4)), b=st.tuples(st.floats(1e-4, 0.01), st.floats(-5e-4, 5e-4)),
       costs=st.tuples(st.floats(5, 100), st.floats(5, 100)), at=st.sampled_from([(2, 8), (1, 4), (3, 5)]),
       cpus=st.integers(1, 16))
def test_mixed_costs_follow_per_type_linear_rates(a, b, costs, at, cpus):
    # two transaction types, each with a rate linear in the processor count and a fixed cost:
    # the profile measured at two counts must give the exact mix at any other count
    def mix(n):
        rates = [r0 + slope * (n - at[0]) for r0, slope in (a, b)]
        total = sum(rates)
        mean = sum(r * c for r, c in zip(rates, costs, strict=False)) / total
        second = sum(r * c * c for r, c in zip(rates, costs, strict=False)) / total
        return total, mean, second

    # a type's rate must stay positive at every count involved (else it is not linear there)
    assume(all(r0 + slope * (n - at[0]) > 0 for r0, slope in (a, b) for n in (*at, cpus)))
    measured = [mix(n) for n in at]
    rate_at = mix(cpus)[0]
    model = SharedBus.from_values({"cpus": cpus, "profile.cpus": list(at), "service": "measured",
                                   "profile.sync_rate": [m[0] for m in measured],
                                   "profile.sync_cycles": [m[1] for m in measured],
                                   "profile.sync_second_moment": [m[2] for m in measured],
                                   "profile.async_rate": [0.0, 0.0], "profile.async_cycles": [0.0, 0.0],
                                   "profile.async_second_moment": [0.0, 0.0]})
    got = model.inputs_at(cpus)
    total, mean, second = mix(cpus)
    assert got["sync_rate"] == pytest.approx(rate_at, rel=1e-9)
    assert got["sync_cycles"] == pytest.approx(mean, rel=1e-9)
    assert got["sync_second_moment"] == pytest.approx(second, rel=1e-9)


def test_model_file_and_errors(capsys):
    assert main(["solve", "data/examples/shared-bus.toml", "--format", "json"]) == 0
    assert '"gsp"' in capsys.readouterr().out
    with pytest.raises(ModelError, match="one value per profile.cpus"):
        SharedBus.from_values({"profile.cpus": [2, 8], "profile.sync_rate": [0.01]})
    with pytest.raises(ModelError, match="extrapolates"):
        SharedBus.from_values({"cpus": 64, "profile.cpus": [2, 8], "profile.sync_rate": [0.02, 0.01],
                               "profile.sync_cycles": [80, 80], "profile.sync_second_moment": [6400, 6400],
                               "profile.async_rate": [0, 0], "profile.async_cycles": [0, 0],
                               "profile.async_second_moment": [0, 0]}).solve()


def test_calibrated_from_simulator_runs_reproduces_them():
    wl = generate("web-server", references=1_300_000)
    runs = {n: simulate_bus(wl, cpus=n, cache="256KiB", block=64) for n in (2, 4)}
    values = profile_from_runs(runs)
    assert values["profile.cpus"] == [2, 4] and values["cpu_cycles"] == 5.0
    unfitted = profile_from_runs(runs, fit_residual=False)
    assert unfitted["bus.residual_factor"] == 1.0
    for n, run in runs.items():
        model = model_from_runs(runs, n).solve().outputs
        plain = SharedBus.from_values({**unfitted, "cpus": n}).solve().outputs
        # at a calibration point the inputs are the run's own: only the queueing approximation is left,
        # and the fitted residual factor brings the model at least as close as the factor 1
        assert abs(model["gsp"] / run.gsp - 1) <= abs(plain["gsp"] / run.gsp - 1) + 1e-3
        assert model["gsp"] == pytest.approx(run.gsp, rel=0.02)
        assert model["bus_utilization"] == pytest.approx(run.bus_utilization, rel=0.05)
    mid = simulate_bus(wl, cpus=3, cache="256KiB", block=64)
    assert model_from_runs(runs, 3).solve().outputs["gsp"] == pytest.approx(mid.gsp, rel=0.05)


def test_cpu_centre_from_the_simulator():
    from calibration.profiles.tpcc_smp import cpu_rate_table, gsp_by_jobs
    from mva.files import read_document
    from mva.modelkind import model_from_document

    gsp1 = gsp_by_jobs(1, 3, references_per_job=100_000)
    gsp2 = gsp_by_jobs(2, 3, references_per_job=100_000)
    assert all(g <= min(j, 1) + 1e-9 for j, g in enumerate(gsp1, start=1))
    assert all(g <= min(j, 2) + 1e-9 for j, g in enumerate(gsp2, start=1))
    assert gsp2[1] > 1.5 * gsp1[0]                    # two jobs on two processors: nearly twice the work
    model = model_from_document(read_document("data/tpcc/c1.toml"))
    rates = cpu_rate_table(model, 1, 2, references_per_job=100_000)
    mu1 = float(model.cpu_rate_function()[0])
    assert rates[0] == pytest.approx(mu1, rel=1e-12)  # the model's own one-CPU speed
    fed = model.replace(cpu__rate=tuple(rates)).solve()
    assert fed.converged and fed.outputs["tpmC"] > 0


def test_report_commands_run_small(capsys):
    """The module commands the README shows run end to end (tiny sizes)."""
    from calibration.studies import shared_bus as sharedbus, tpcc_cpu_centre as cpu_centre, tpcw as report

    assert sharedbus.main(["--references", "130000", "--cpus", "1:3", "--calibrate-at", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "GSP error over 18 cases" in out
    assert cpu_centre.main(["--max-jobs", "2", "--references-per-job", "20000"]) == 0
    assert "Table 10" in capsys.readouterr().out
    assert report.main(["--references", "260000"]) == 0        # a finding that fails is no error
    out = capsys.readouterr().out
    headlines = [c for c in report.CLAIMS if c.kind == "headline"]
    assert out.count("\n  [yes] ") + out.count("\n  [partly] ") + out.count("\n  [no] ") == len(report.CLAIMS) - 2
    assert out.count("\n  [in-sample] ") == 2                  # Table 5's values: the machine's cost came from one
    # the stored excerpts are test-sized, and the count says so; checks are counted apart
    assert "test-sized run (--small), not the paper's problem sizes: findings: " in out
    assert f" of {len(headlines) - 2} (2 in-sample, not counted)\n" in out and "\nchecks: " in out
