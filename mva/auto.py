"""``method="auto"``: the exact answer whenever it is affordable, otherwise the most accurate
approximation that is.

Choice, by the network's shape (no solve is attempted and thrown away):

0. a network with closed customers at a station that is not product form (priority,
   FCFS with class-dependent demands, multi-server FCFS with non-exponential service;
   :mod:`mva.nonproduct`) skips exact MVA, which does not apply there; it is solved by
   **decomposition** (:func:`mva.decomposition`: those stations as one Markov chain
   against the flow-equivalent server of the rest) when the method takes the network and
   the chain of those stations, or of the busiest of them (the others then go to the
   flow-equivalent server with the non-product-form terms), has at most
   :data:`DECOMPOSITION_STATES` states and the flow-equivalent server's population
   lattice at most :data:`DECOMPOSITION_LATTICE` vectors, else by the approximate methods
   below with the non-product-form terms (also where the chain's stationary equations
   could not be solved to their limit, which ``extras["auto"]`` then says);
1. **exact** (:func:`mva.exact_mva`) when its population lattice fits in memory and its
   estimated time, the cost of :func:`mva.exact.exact_cost` in lattice steps times the
   measured time of a step (:data:`STEP_SECONDS`: one class, or several, whose steps
   also update marginals and are memory-bound), is at most :data:`EXACT_BUDGET_SECONDS`;
2. else **Linearizer** (:func:`mva.linearizer`) when its work per outer iteration, C + 1
   fixed points of O(M C J) each, is at most :data:`LINEARIZER_BUDGET`;
3. else **Bard-Schweitzer** (:func:`mva.schweitzer`).

The result's ``method`` names the method that ran, ``accuracy`` what its numbers are
worth (``"exact"``, the approximation's measured typical error, or ``"unreliable: ..."``
naming a station), and ``extras["auto"]`` why it was chosen.
"""
from __future__ import annotations

import warnings

from .approximate import check_options, linearizer, schweitzer
from .decomposition import chain_states, decomposition, decomposition_refusal
from .errors import NumericalWarning
from .exact import exact_cost, exact_lattice_fits, exact_mva
from .network import Network, require_network
from .plan import SolverPlan
from .result import Result

__all__ = ["auto", "choose_method", "EXACT_BUDGET_SECONDS", "STEP_SECONDS", "LINEARIZER_BUDGET",
           "DECOMPOSITION_STATES", "DECOMPOSITION_LATTICE"]

#: Longest estimated exact solve ``auto`` accepts (seconds).
EXACT_BUDGET_SECONDS = 1.0
#: Seconds per lattice step of the exact solver, one class and several (2 ns and 10 ns on
#: this 2-core machine: single-class networks measured 1.7-2.3 ns; two to three classes,
#: six random networks and the two-class example, 5.5-11 ns).  The two-class example at
#: 3,000 + 3,000 customers (4.3e8 steps) took 4.8 s, which a budget of 10^9 one-class
#: steps had called "about a second".
STEP_SECONDS = {"one class": 2e-9, "several classes": 1e-8}
#: Largest Linearizer work per substitution sweep over its C + 1 fixed points (station x class
#: x capacity values x (C + 1)); measured: 2.6e6 took 0.8 s (50 classes x 1,000 stations).
LINEARIZER_BUDGET = 5e6
#: Largest Markov chain (states, :func:`mva.decomposition.chain_states`) ``auto`` solves by
#: decomposition: about a second here, the budget exact MVA gets (chains of 117,000-
#: 228,000 states took 0.4-0.8 s; 440,000 took 4 s); ``method="decomposition"`` goes to
#: :data:`mva.decomposition.STATE_LIMIT`.
DECOMPOSITION_STATES = 150_000
#: Largest population lattice of the flow-equivalent server ``auto`` decomposes against
#: (population vectors): one MVA recursion over it took 1.2 s at 1.5 million here.
DECOMPOSITION_LATTICE = 1_000_000


def choose_method(network: Network) -> tuple[str, str]:
    """The method ``auto`` runs on ``network`` and the reason, in words."""
    plan = SolverPlan.of(network)
    if plan.population.sum() == 0:
        return "exact", "no closed customers"
    if plan.backlog.any():
        why = f"{plan.non_product[0]} is not product form"
        refusal = decomposition_refusal(network, DECOMPOSITION_STATES, max_lattice=DECOMPOSITION_LATTICE)
        whole = chain_states(network)
        if refusal is None and 0 < whole <= DECOMPOSITION_STATES:
            return "decomposition", f"{why}; its Markov chain has {whole:,} states before it takes in other stations"
        if refusal is None:
            return "decomposition", (f"{why}; the Markov chain of every such station would be too large (or they "
                                     "do not follow one another in every route), so it holds the busiest that fit "
                                     "and leaves the others to the flow-equivalent server")
        return _approximate_choice(plan, f"{why} and decomposition does not apply ({refusal}): non-product-form "
                                         "MVA (mva.nonproduct)")
    algorithm, cost = exact_cost(plan)
    seconds = cost * STEP_SECONDS["one class" if len(plan.population) == 1 else "several classes"]
    if exact_lattice_fits(plan) and seconds <= EXACT_BUDGET_SECONDS:
        return "exact", (f"estimated {seconds:.2g} s ({cost:.3g} lattice steps, {algorithm}), within the "
                         f"budget of {EXACT_BUDGET_SECONDS:g} s")
    return _approximate_choice(plan, f"the exact lattice has {float(plan.lattice_points):.3g} population vectors "
                                     f"(estimated {seconds:.2g} s, budget {EXACT_BUDGET_SECONDS:g} s)")


def _approximate_choice(plan: SolverPlan, why: str) -> tuple[str, str]:
    """Linearizer when its work per outer iteration fits :data:`LINEARIZER_BUDGET`, else
    Bard-Schweitzer; ``why`` says why exact MVA did not run."""
    C = len(plan.population)
    linearizer_work = (C + 1) * float(len(plan.cap_len) * C * plan.cap_len.max())
    if linearizer_work <= LINEARIZER_BUDGET:
        return "linearizer", why
    return "schweitzer", f"{why}; Linearizer's {linearizer_work:.3g} steps per outer iteration exceed " \
                         f"{LINEARIZER_BUDGET:.3g}"


def auto(network: Network, tol: float = 1e-8, max_iter: int = 10_000, max_outer: int = 100,
         multiserver: str = "marginal") -> Result:
    """Solve ``network`` exactly when affordable, else by Linearizer or Bard-Schweitzer
    (module notes).

    Parameters
    ----------
    network : Network
    tol, max_iter, max_outer, multiserver
        Options of the approximate methods (see :func:`mva.linearizer`); unused when the
        exact method runs.

    Returns
    -------
    Result
        ``method`` is the method that ran; ``extras["auto"]`` says why.

    Examples
    --------
    >>> from mva import Network, Station, solve
    >>> net = Network([Station("cpu", "queue", [0.1])], population=[3])
    >>> solve(net, "auto").method
    'exact'
    """
    require_network(network)
    check_options(tol, max_iter, multiserver, max_outer=max_outer)   # bad options fail whatever runs
    method, reason = choose_method(network)
    if method == "exact":
        result = exact_mva(network)
    elif method == "decomposition":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NumericalWarning)
            result = decomposition(network, max_states=DECOMPOSITION_STATES)
        if not result.converged:
            # a chain its solvers could not settle: the approximate method answers instead
            method = "linearizer"
            reason += (f"; but its stationary equations were solved only to a residual of "
                       f"{result.extras['residual']:.2g}, so non-product-form MVA (Linearizer) answers")
            result = linearizer(network, tol=tol, max_iter=max_iter, max_outer=max_outer, multiserver=multiserver)
        else:
            for w in caught:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    elif method == "linearizer":
        result = linearizer(network, tol=tol, max_iter=max_iter, max_outer=max_outer, multiserver=multiserver)
    else:
        result = schweitzer(network, tol=tol, max_iter=max_iter, multiserver=multiserver)
    result.extras["auto"] = f"{method}: {reason}"
    return result
