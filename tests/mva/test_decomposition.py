"""Decomposition (mva.decomposition): the non-product-form stations as one Markov chain
against the flow-equivalent server of the rest.

Independent checks: the whole network's continuous-time Markov chain
(tests/references/reference_ctmc.py, no code shared with mva) where the decomposition is
exact (the rest is the terminals alone, and no level holds more than two customers) and
where it is not; the utilisation law and Little's law, which the chain's probabilities
must obey whatever its rates (hypothesis)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mva import ModelError, Network, NumericalWarning, Station, solve
from mva.decomposition import chain_states, decomposition_refusal
from references.reference_ctmc import solve_closed


def _net(stations, population, think):
    """A Network from reference_ctmc's station tuples (same routes: file order)."""
    out = []
    for k, s in enumerate(stations):
        if s[0] == "priority":
            out.append(Station(f"s{k}", "queue", s[1], discipline="priority", priority=s[2]))
        elif s[0] == "fcfs":
            out.append(Station(f"s{k}", "queue", s[1], discipline="fcfs"))
        else:
            out.append(Station(f"s{k}", "queue" if s[0] == "ps" else "delay", s[1]))
    return Network(out, population=population, think_time=think)


@pytest.mark.parametrize("stations, population", [
    ([("priority", [0.2, 0.5], [0, 1])], [2, 3]),
    ([("priority", [0.2, 0.5], [1, 0])], [3, 2]),
    ([("priority", [0.3, 0.2, 0.6], [0, 1, 1])], [2, 1, 1]),            # a shared level, at most two there
    ([("priority", [0.2, 0.5], [0, 1]), ("fcfs", [0.3, 0.15])], [1, 1]),  # two stations in one chain
    ([("fcfs", [0.1, 0.6]), ("priority", [0.4, 0.2], [1, 0])], [1, 1]),
])
def test_exact_where_the_rest_is_the_terminals(stations, population):
    """With only terminals outside the block the flow-equivalent server is exact (m_c
    customers thinking leave at rate m_c / Z_c), and with at most two customers at a shared
    level so is the head's rule: the chain's answer is the whole network's."""
    think = [1.0, 2.0, 1.5][:len(population)]
    exact, queue = solve_closed(stations, population, think)
    r = solve(_net(stations, population, think), "decomposition")
    assert r.method == "decomposition" and r.converged
    assert np.allclose(r.throughput, exact, rtol=1e-9)
    assert np.allclose(r.queue_length, queue, rtol=1e-9, atol=1e-12)


def test_close_to_the_markov_chain_where_the_rest_queues():
    """With a queue outside the block the flow-equivalent server is an approximation:
    within 1% of the whole network's chain here, where the non-product-form MVA misses by
    more."""
    stations = [("priority", [0.2, 0.5], [1, 0]), ("fcfs", [0.3, 0.15]), ("ps", [0.25, 0.3])]
    population, think = [2, 3], [1.0, 2.0]
    exact, _ = solve_closed(stations, population, think)
    net = _net(stations, population, think)
    r = solve(net, "auto")
    assert r.method == "decomposition" and "mva.decomposition" in r.accuracy
    error = np.max(np.abs(r.throughput / exact - 1))
    assert error < 0.01, (r.throughput, exact)
    assert np.max(np.abs(solve(net, "linearizer").throughput / exact - 1)) > error


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(0.05, 1.0)), min_size=3, max_size=3),
       st.lists(st.integers(0, 2), min_size=3, max_size=3),
       st.lists(st.one_of(st.just(0.0), st.floats(0.05, 1.0)), min_size=3, max_size=3),
       st.lists(st.integers(1, 4), min_size=3, max_size=3),
       st.lists(st.one_of(st.just(0.0), st.floats(0.05, 3.0)), min_size=3, max_size=3),
       st.booleans())
def test_the_chain_obeys_the_utilisation_and_littles_laws(prio, levels, fcfs, population, think, partial):
    """Whatever the rates (some classes skipping a station): each block station's busy
    probability per class (from the chain) is X_c D_kc (utilisation law), no station is
    busier than 1, and every class's customers are somewhere (sum of queue lengths plus
    X_c Z_c is N_c, Little's law).  ``partial``: the chain has room for one station only,
    the other non-product-form one is solved in the flow-equivalent server's lattice."""
    import sys

    module = sys.modules["mva.decomposition"]
    net = Network([Station("p", "queue", prio, discipline="priority", priority=levels),
                   Station("f", "queue", fcfs, discipline="fcfs"),
                   Station("d", "queue", [0.3, 0.1, 0.2]), Station("z", "delay", [0.5, 0.5, 0.5])],
                  population=population, think_time=think)
    if decomposition_refusal(net) is not None:   # e.g. one level and equal demands: product form
        return
    plan = module.SolverPlan.of(net)
    room = module.STATE_LIMIT
    if partial and plan.backlog.sum() == 2:
        room = max(module._states(net, plan, [k], module._routes(net, plan, [k])) for k in range(2))
    r = solve(net, "decomposition", max_states=room)
    assert room == module.STATE_LIMIT or not {"p", "f"} <= set(r.extras["chain"])
    assert r.converged
    assert np.all(r.throughput > 0)
    assert np.allclose(r.utilization, net.demands * r.throughput[None, :], rtol=1e-7, atol=1e-10)
    assert r.station_utilization()[:3].max() <= 1 + 1e-9
    assert np.allclose(r.queue_length.sum(axis=0) + r.throughput * np.asarray(think), population, rtol=1e-7)
    assert np.all(r.residence_time[:2] >= net.demands[:2] * (1 - 1e-9))


def test_refusals_name_the_reason_and_auto_falls_back():
    """A class that visits a product-form station between two block stations cannot have
    both in one chain: without partial chains the method refuses naming why; with them (the
    default, and auto) the busiest non-product-form station is the chain and the other is
    left to the flow-equivalent server, which the accuracy note says.  Where not even one
    station's chain fits, auto runs the non-product-form MVA."""
    stations = [Station("p", "queue", [0.2, 0.5], discipline="priority", priority=[0, 1]),
                Station("d", "queue", [0.3, 0.1]),
                Station("f", "queue", [0.1, 0.6], discipline="fcfs")]
    net = Network(stations, population=[2, 2], think_time=[1.0, 1.0])
    assert "visits other stations between" in decomposition_refusal(net, partial=False)
    assert decomposition_refusal(net) is None
    with pytest.raises(ModelError, match="decomposition cannot solve this network: class") as info:
        solve(net, "decomposition", partial=False)
    assert info.value.field == "method"
    r = solve(net, "auto")
    assert r.method == "decomposition" and "leaves the others to the flow-equivalent server" in r.extras["auto"]
    assert r.extras["chain"] == ["p", "d", "f"] and r.extras["left_out"] == []    # grown to the whole network: exact
    scv = Network([Station("p", "queue", [0.2, 0.5], discipline="fcfs", scv=4.0)], population=[1, 1],
                  think_time=[1.0, 1.0])
    assert "exponential" in decomposition_refusal(scv)
    big = Network([Station("p", "queue", [0.2, 0.5, 0.1], discipline="priority", priority=[0, 1, 2]),
                   Station("f", "queue", [0.1, 0.6, 0.3], discipline="fcfs"), Station("d", "queue", [0.3, 0.1, 0.2])],
                  population=[60, 60, 60])
    assert chain_states(big) > 500_000 and "states" in decomposition_refusal(big, partial=False)
    assert "even the smallest chain, of one non-product-form station, would have 226,981 states" in \
        decomposition_refusal(big, 150_000)
    with pytest.raises(ModelError, match="max_states: must be an integer >= 1, got 0"):
        solve(net, "decomposition", max_states=0)
    with pytest.raises(ModelError, match="partial: must be True or False, got 'no'"):
        solve(net, "decomposition", partial="no")
    assert solve(big, "auto").method == "linearizer"


@pytest.mark.parametrize("stations, population, bound, beats_linearizer", [
    # the chain holds the busier station; the other is left to the complement
    ([("fcfs", [0.05, 0.4]), ("ps", [0.2, 0.2]), ("fcfs", [0.5, 0.08])], [3, 2], 0.02, True),
    ([("priority", [0.3, 0.2, 0.4], [1, 0, 1]), ("delay", [0.2, 0.3, 0.1]), ("priority", [0.1, 0.3, 0.2], [0, 1, 1])],
     [2, 1, 2], 0.01, True),
    ([("fcfs", [0.1, 0.5]), ("ps", [0.2, 0.3]), ("fcfs", [0.4, 0.1])], [2, 2], 0.01, True),
    ([("priority", [0.15, 0.3], [1, 0]), ("ps", [0.1, 0.2]), ("fcfs", [0.3, 0.05])], [3, 2], 0.01, True),
    # a case where it is not closer than Linearizer (3.0% against 2.7%): flagged
    ([("priority", [0.2, 0.5], [0, 1]), ("ps", [0.3, 0.1]), ("fcfs", [0.1, 0.6])], [2, 3], 0.035, False),
])
def test_a_partial_chain_against_the_whole_markov_chain(stations, population, bound, beats_linearizer):
    """Where the non-product-form stations cannot form one chain (here a product-form
    station lies between them in every route), the busiest is the chain and the others are
    solved in the flow-equivalent server's lattice with the non-product-form MVA terms:
    close to the whole network's Markov chain, closer than solving the stations left out
    as processor sharing, mostly closer than the non-product-form MVA (Linearizer), and
    flagged where those two treatments differ by more than 2%."""
    import sys

    module = sys.modules["mva.decomposition"]
    think = [1.0, 2.0, 1.5][:len(population)]
    exact, _ = solve_closed(stations, population, think)
    net = _net(stations, population, think)
    plan = module.SolverPlan.of(net)
    # room for one non-product-form station's chain, not for two stations
    alone = max(module._states(net, plan, [k], module._routes(net, plan, [k])) for k in np.flatnonzero(plan.backlog))
    r = solve(net, "decomposition", max_states=alone)
    assert len(r.extras["chain"]) == 1 and "left to the flow-equivalent server" in r.accuracy
    assert len(r.extras["left_out"]) == int(plan.backlog.sum()) - 1
    error = np.max(np.abs(r.throughput / exact - 1))
    assert error < bound, (r.throughput, exact)
    assert (np.max(np.abs(solve(net, "linearizer").throughput / exact - 1)) > error) == beats_linearizer
    chain = [net.station_names.index(name) for name in r.extras["chain"]]
    plain = module._solve_block(net, plan, chain, ((False, 0),))[0]["throughput"]
    assert np.max(np.abs(plain / exact - 1)) > error
    gap = np.max(np.abs(plain / r.throughput - 1))
    assert r.extras["spread"] == pytest.approx(gap) and r.accuracy.startswith("unreliable") == (gap > 0.02)


def test_the_iterative_solvers_agree_with_the_direct_one(monkeypatch):
    """Large chains are solved iteratively (BiCGSTAB, then ILU-preconditioned GMRES where
    it does not settle): forced onto each path, the same stationary answer as the direct
    sparse solve, and a residual reported."""
    import sys

    module = sys.modules["mva.decomposition"]
    net = Network([Station("p", "queue", [0.2, 0.5, 0.3], discipline="priority", priority=[0, 1, 1]),
                   Station("f", "queue", [0.1, 0.6, 0.2], discipline="fcfs"), Station("d", "queue", [0.3, 0.1, 0.2])],
                  population=[3, 2, 2], think_time=[1.0, 0.5, 0.0])
    monkeypatch.setattr(module, "DIRECT_LIMIT", 10**9)
    direct = solve(net, "decomposition")
    monkeypatch.setattr(module, "DIRECT_LIMIT", 0)
    iterative = solve(net, "decomposition")
    assert iterative.converged and iterative.extras["residual"] <= 1e-12
    assert np.allclose(iterative.throughput, direct.throughput, rtol=1e-9)
    assert np.allclose(iterative.queue_length, direct.queue_length, rtol=1e-8, atol=1e-12)

    def stalled(a, b, x0=None, **_):
        return np.zeros_like(b), 1

    monkeypatch.setattr(module.spla, "bicgstab", stalled)
    fallback = solve(net, "decomposition")
    assert fallback.converged and np.allclose(fallback.throughput, direct.throughput, rtol=1e-9)


def test_the_chain_grows_and_says_what_the_flow_equivalent_server_costs():
    """The chain takes in product-form stations while they fit; the accuracy says how
    much the last one moved the answer, and flags the result where that exceeds the limit."""
    net = Network([Station("p", "queue", [0.4, 0.3], discipline="priority", priority=[0, 1]),
                   Station("d", "queue", [0.5, 0.45]), Station("e", "queue", [0.2, 0.3])],
                  population=[3, 3], think_time=[0.5, 0.5])
    r = solve(net, "decomposition")
    assert r.extras["chain"] == ["p", "d", "e"]          # the whole network: the rest is the terminals
    assert "against the terminals" in r.accuracy and r.extras["spread"] == 0.0
    small = solve(net, "decomposition", max_states=200)
    assert small.extras["chain"] != r.extras["chain"] and 0 < small.extras["spread"]
    assert ("moved the class throughputs by" in small.accuracy)
    assert small.accuracy.startswith("unreliable") == (small.extras["spread"] > 0.02)


@pytest.mark.parametrize("priority_demand, queue_demand, population, flagged", [
    ([0.3, 0.4], [0.2, 0.5], [2, 3], False),
    ([0.96, 0.36], [0.68, 0.73], [4, 2], True),
])
def test_a_chain_that_cannot_grow_gets_a_second_opinion(priority_demand, queue_demand, population, flagged):
    """Where no station more fits the chain, the flow-equivalent server's error cannot be
    estimated by growth: the result carries how far Linearizer's non-product-form MVA is
    from it and is flagged beyond 3%."""
    import sys

    module = sys.modules["mva.decomposition"]
    net = Network([Station("p", "queue", priority_demand, discipline="priority", priority=[0, 1]),
                   Station("q", "queue", queue_demand), Station("z", "delay", [0.5, 0.5])],
                  population=population, think_time=[1.0, 0.5])
    plan = module.SolverPlan.of(net)
    r = solve(net, "decomposition", max_states=module._states(net, plan, [0], module._routes(net, plan, [0])))
    assert r.extras["chain"] == ["p"] and r.extras["spread"] == 0.0
    gap = np.max(np.abs(solve(net, "linearizer").throughput / r.throughput - 1))
    assert r.extras["opinion"] == pytest.approx(gap, rel=1e-6)
    assert r.accuracy.startswith("unreliable: no station more fits") == flagged == (gap > 0.03)


def test_the_next_head_shares_by_each_rule_by_hand():
    """Two of class 0 (demand 0.1) and one of class 1 (0.3) waiting, class 2 (0.2) absent:
    in proportion 2/3, 1/3; shortest first class 0; longest first class 1.  Nobody waiting:
    the level is left empty (option 0) by every rule."""
    import sys

    module = sys.modules["mva.decomposition"]
    shares = module._next_head_shares(np.array([[2, 1, 0], [0, 0, 0]]), np.array([0.1, 0.3, 0.2]))
    assert module.ORDER_RULES == ("random", "shortest", "longest")
    assert np.allclose(shares[0, :, 0], [0, 2 / 3, 1 / 3, 0])
    assert np.allclose(shares[0, :, 1], [0, 1, 0, 0]) and np.allclose(shares[0, :, 2], [0, 0, 1, 0])
    assert np.allclose(shares[1], [[1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0]])


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["fcfs", "priority"]), st.integers(2, 3), st.data())
def test_the_fcfs_order_lies_between_shortest_and_longest_first(kind, C, data):
    """Against the whole network's chain with the full FCFS order (reference_ctmc), where
    only the order within a shared level is approximated: with two classes each class's
    exact throughput lies between the chain's answers with the shortest waiting class
    always next and with the longest (with three a middle class can fall just outside:
    0.06% for demands 1, 1, 0.125), and the span the result reports exceeds the chain's
    error."""
    import sys

    module = sys.modules["mva.decomposition"]
    demand = data.draw(st.lists(st.floats(0.05, 1.0), min_size=C, max_size=C, unique=True)
                       .filter(lambda d: np.ptp(d) > 0.01))
    station = ("fcfs", demand) if kind == "fcfs" else ("priority", demand, [0] + [1] * (C - 1))
    population = data.draw(st.lists(st.integers(1, 3), min_size=C, max_size=C).filter(lambda p: sum(p) <= 7))
    think = data.draw(st.lists(st.floats(0.2, 3.0), min_size=C, max_size=C))
    exact, _ = solve_closed([station], population, think)
    net = _net([station], population, think)
    r = solve(net, "decomposition")
    answers = module._solve_block(net, module.SolverPlan.of(net), [0], ((True, 0), (True, 1), (True, 2)))
    shortest, longest = answers[1]["throughput"], answers[2]["throughput"]
    assert np.allclose(answers[0]["throughput"], r.throughput, rtol=1e-12)
    low, high = np.minimum(shortest, longest), np.maximum(shortest, longest)
    if C == 2:
        assert np.all(exact >= low * (1 - 1e-9)) and np.all(exact <= high * (1 + 1e-9)), (exact, low, high)
    assert r.extras["order_span"] == pytest.approx(np.max((high - low) / r.throughput), rel=1e-9, abs=1e-15)
    assert np.max(np.abs(r.throughput / exact - 1)) <= r.extras["order_span"] + 1e-9


@pytest.mark.parametrize("station, population, flagged", [
    (("fcfs", [0.1, 1.0]), [2, 5], True),       # span 157%: the chain's rule is 6.2% from the exact chain
    # the shared level's classes have equal demands: the order does not matter (BCMP)
    (("priority", [0.2, 0.4, 0.4], [0, 1, 1]), [2, 2, 2], False),
])
def test_where_the_fcfs_order_matters_the_result_is_flagged(station, population, flagged):
    """A result whose shortest-first and longest-first answers differ by more than
    ORDER_LIMIT is flagged and says why; with equal demands no extra chain is solved."""
    net = _net([station, ("ps", [0.2, 0.3, 0.1][:len(population)])], population, [1.0, 2.0, 1.5][:len(population)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        r = solve(net, "decomposition")
    assert (r.extras["order_span"] > 1.0) == flagged
    assert r.accuracy.startswith("unreliable: the order of service within a level") == flagged
    assert ("serving the waiting class with the shortest demand first" in r.accuracy) == flagged
    if not flagged:
        assert r.extras["order_span"] == 0.0


def test_a_chain_whose_empty_state_is_very_rare_is_solved():
    """Held-out network 277 of seed 10036 (FCFS kind): class 2 thinks 0.0014 s, so the
    state with everyone outside the chain has probability about 1e-20.  With that state's
    probability fixed, no solver kept a digit (residual 1, throughputs 0); the chain's
    reference is now the state left most slowly.  The answer is close to Linearizer's and
    to the simulation's (0.2511, 1.0802 against 0.2508, 1.0780, simulated to +-0.5%)."""
    demands = [[0.32169837538145024, 0.5247658069394707], [0.13391162433208414, 0.28349994630904585],
               [0.11339496957438366, 0.16808698931425747]]
    net = Network([Station(f"fcfs{k + 1}", "queue", d, discipline="fcfs") for k, d in enumerate(demands)]
                  + [Station("ps1", "queue", [0.18661263468418915, 0.8247568740310973]),
                     Station("ps2", "delay", [0.9881794624916405, 0.30253053645117967]),
                     Station("ps3", "queue", [0.6668889457541469, 0.17435582926532694])],
                  population=[2, 6], think_time=[3.6547659518530966, 0.001379046591761451])
    r = solve(net, "auto")
    assert r.method == "decomposition" and r.converged and r.extras["residual"] <= 1e-9
    assert r.extras["states"] > 500                      # the iterative solvers' path
    np.testing.assert_allclose(r.throughput, solve(net, "linearizer").throughput, rtol=0.02)


def test_auto_answers_by_linearizer_where_the_chain_is_not_solved(monkeypatch):
    """A chain its solvers leave unsettled is not returned by auto (it would say so, but
    its numbers could be anything): Linearizer answers, and extras['auto'] says why."""
    import sys

    module = sys.modules["mva.decomposition"]
    net = _net([("priority", [0.2, 0.5], [0, 1]), ("ps", [0.3, 0.2])], [2, 3], [1.0, 2.0])
    assert solve(net, "auto").method == "decomposition"
    monkeypatch.setattr(module._Chain, "stationary", lambda self, x_comp, start=None, rule=0, target=0.0:
                        (np.full(len(self.n), 1.0 / len(self.n)), 0.5))
    with pytest.warns(NumericalWarning) as caught:
        r = solve(net, "auto")
    assert r.method == "linearizer" and "residual of 0.5" in r.extras["auto"]
    np.testing.assert_array_equal(r.throughput, solve(net, "linearizer").throughput)
    assert not any("decomposition" in str(w.message) for w in caught)


def test_many_non_product_form_stations_are_not_enumerated():
    """Nine FCFS stations with class-dependent demands and 12 customers per class: the
    whole chain would have 8.6e10 count states.  It is neither listed nor counted
    (that ran out of memory); the refusal says "more than" the cap, auto answers with a
    partial chain, and a max_states beyond the cap is refused by name."""
    import sys

    module = sys.modules["mva.decomposition"]
    rng = np.random.default_rng(1)
    net = Network([Station(f"f{k}", "queue", rng.uniform(0.05, 1, 2), discipline="fcfs") for k in range(9)],
                  population=[12, 12], think_time=[1.0, 1.0])
    assert chain_states(net) == math.comb(21, 9) ** 2 > module.COUNT_CAP
    assert "would have more than 2,000,000 states" in decomposition_refusal(net, partial=False)
    r = solve(net, "auto")
    assert r.method == "decomposition" and len(r.extras["chain"]) < 9 and r.extras["states"] <= 150_000
    with pytest.raises(ModelError, match="max_states: must be at most 2,000,000"):
        solve(net, "decomposition", max_states=3_000_000)


def test_a_population_lattice_too_large_is_refused_before_any_work():
    """Two classes of 2,000 customers that never visit the priority station: its chain
    has 16 states, but the flow-equivalent server's population lattice would have 64
    million vectors.  The method refuses naming it (it used to run out of memory or
    time); auto runs Linearizer and says why, as it does above its own, lower lattice limit."""
    from mva.auto import DECOMPOSITION_LATTICE

    def network(big):
        return Network([Station("p", "queue", [0.2, 0.5, 0.0, 0.0], discipline="priority", priority=[0, 1, 0, 0]),
                        Station("q", "queue", [0.1, 0.1, 0.02, 0.03])], population=[3, 3, big, big],
                       think_time=[1.0, 1.0, 30.0, 30.0])

    huge = network(2000)
    assert chain_states(huge) == 16
    with pytest.raises(ModelError, match="population lattice would have 64,064,016 vectors"):
        solve(huge, "decomposition")
    r = solve(huge, "auto")
    assert r.method == "linearizer" and "population lattice would have 64,064,016" in r.extras["auto"]
    over = network(300)      # 1,449,616 vectors: the method takes it, auto does not
    assert 16 * 301 ** 2 > DECOMPOSITION_LATTICE
    assert decomposition_refusal(over) is None
    why = solve(over, "auto").extras["auto"]
    assert "would have 1,449,616 vectors" in why and "limits 1,000,000 vectors" in why
