"""``method="auto"``: the exact answer whenever it is affordable, otherwise the most accurate
approximation that is.

Choice, by the network's shape (no solve is attempted and thrown away):

1. **exact** (:func:`mva.exact_mva`) when its population lattice fits in memory and its
   estimated cost (:func:`mva.exact.exact_cost`) is at most :data:`EXACT_BUDGET` lattice
   steps (about a second here);
2. else **Linearizer** (:func:`mva.linearizer`) when its work per outer iteration, C + 1
   fixed points of O(M C J) each, is at most :data:`LINEARIZER_BUDGET`;
3. else **Bard-Schweitzer** (:func:`mva.schweitzer`).

The result's ``method`` names the method that ran, ``accuracy`` what its numbers are
worth (``"exact"``, the approximation's measured typical error, or ``"unreliable: ..."``
naming a station), and ``extras["auto"]`` why it was chosen.
"""
from __future__ import annotations

from .approximate import check_options, linearizer, schweitzer
from .exact import exact_cost, exact_lattice_fits, exact_mva
from .network import Network
from .plan import SolverPlan
from .result import Result

__all__ = ["auto", "choose_method", "EXACT_BUDGET", "LINEARIZER_BUDGET"]

#: Largest estimated exact cost (lattice steps, 1-2 ns each) that ``auto`` solves exactly.
EXACT_BUDGET = 1e9
#: Largest Linearizer work per substitution sweep over its C + 1 fixed points (station x class
#: x capacity values x (C + 1)); measured: 2.6e6 took 0.8 s (50 classes x 1,000 stations).
LINEARIZER_BUDGET = 5e6


def choose_method(network: Network) -> tuple[str, str]:
    """The method ``auto`` runs on ``network`` and the reason, in words."""
    plan = SolverPlan.of(network)
    if plan.population.sum() == 0:
        return "exact", "no closed customers"
    algorithm, cost = exact_cost(plan)
    if exact_lattice_fits(plan) and cost <= EXACT_BUDGET:
        return "exact", f"exact cost {cost:.3g} lattice steps ({algorithm}) within the budget {EXACT_BUDGET:.3g}"
    why = (f"the exact lattice has {float(plan.lattice_points):.3g} population vectors (estimated cost {cost:.3g} steps, "
           f"budget {EXACT_BUDGET:.3g})")
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
    check_options(tol, max_iter, multiserver, max_outer=max_outer)   # bad options fail whatever runs
    method, reason = choose_method(network)
    if method == "exact":
        result = exact_mva(network)
    elif method == "linearizer":
        result = linearizer(network, tol=tol, max_iter=max_iter, max_outer=max_outer, multiserver=multiserver)
    else:
        result = schweitzer(network, tol=tol, max_iter=max_iter, multiserver=multiserver)
    result.extras["auto"] = f"{method}: {reason}"
    return result
