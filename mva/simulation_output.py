"""Output analysis of a discrete-event simulation: batch means or independent replications,
Student-t intervals, a precision target, replications on Dask.

Shared by every simulator of the project (:func:`mva.simulation.simulate_network` for
network files, the model kinds' ``simulate``); their run settings are one
:class:`~mva.simulation_settings.SimulationSettings`.  A simulator supplies

- ``make_chain(seed)``: a fresh simulated system (picklable, so Dask workers can build
  it) whose ``run(events)`` advances that many events and returns the batch's
  *accumulators*: a dict of additive numpy arrays or floats that includes ``"time"``, the
  simulated time the batch spanned;
- ``measures(acc)``: the estimates (name to array) from accumulators; the estimate of
  the whole run comes from the merged (summed) accumulators, its half-width from the
  spread of the batches' (or replications') estimates.

Batch means after a discarded warm-up follow Law & Kelton, *Simulation Modeling and
Analysis* (3rd ed., 2000), §9.5.3; with ``precision`` the run continues, doubling its
batches' length, until the named measure is known within that relative half-width.
Replications (§9.4.1) use seeds ``seed, seed + 1, ...`` in order, so a Dask run gives
the serial run's numbers.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from .errors import ModelError
from .simulation_settings import SimulationSettings

__all__ = ["Estimate", "analyse", "merge", "student_t_quantile"]


@dataclass(frozen=True)
class Estimate:
    """Point estimates (``mean``) and interval half-widths (``half``) by measure, the merged
    accumulators (``total``), events spent, how they were spent (``how``, one phrase),
    whether the precision was reached, and the interval method."""

    mean: dict
    half: dict
    total: dict
    spent: int
    how: str
    reached: bool
    method: str


def student_t_quantile(probability: float, dof: int) -> float:
    """The ``probability`` quantile of Student's t with ``dof`` degrees of freedom (the
    half-width factor of a confidence interval: probability 0.5 + level / 2).  From
    scipy.special, which loads in milliseconds where scipy.stats takes 0.3 s."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, probability))


def merge(a: dict, b: dict) -> dict:
    """Accumulators of two batches together."""
    return {k: a[k] + b[k] for k in a}


def analyse(make_chain: Callable, measures: Callable[[dict], dict], settings: SimulationSettings,
            auto_target: Callable[[dict, dict], tuple] | None = None) -> Estimate:
    """Run a simulator and estimate its measures with ``settings.confidence`` intervals.

    One run cut into ``batches`` batch means after the warm-up, or (``replications``
    > 1) independent replications of ``warmup + events`` events each, their means the
    samples.  With ``precision``, every positive entry of the measure ``target`` must
    reach a half-width of at most that fraction of itself: batch means double their
    length, replications are added, until it does or ``max_events`` are spent.
    ``auto_target(mean, half)`` gives the (estimates, half-widths) that ``target =
    "auto"`` means; without it "auto" is every entry of every measure.
    """
    s = settings
    seed, events, warmup, batches, replications = int(s.seed), s.events, s.warmup_events, s.batches, s.replications
    confidence, precision, max_events, target = s.confidence, s.precision, s.max_events, s.target
    workers, scheduler = s.workers, s.scheduler
    def estimate(samples):
        t_quantile = student_t_quantile(0.5 + confidence / 2, len(samples) - 1)
        per = [measures(a) for a in samples]
        total = samples[0]
        for a in samples[1:]:
            total = merge(total, a)
        mean = measures(total)
        half = {}
        for name in mean:
            stack = np.array([p[name] for p in per], dtype=float)
            count = np.sum(~np.isnan(stack), axis=0)
            with warnings.catch_warnings():       # a measure no batch saw: all-NaN column
                warnings.simplefilter("ignore", RuntimeWarning)
                spread = np.nanstd(stack, axis=0, ddof=1)
            # fewer than two batches saw the measure: its interval is unknown
            half[name] = np.where(count >= 2, t_quantile * spread / np.sqrt(np.maximum(count, 1)), np.inf)
        return mean, half, total

    def selected(mean, half):
        if target == "auto":
            if auto_target is not None:
                return auto_target(mean, half)
            names = list(mean)
        elif target in mean:
            names = [target]
        else:
            raise ModelError("target", f"no measure {target!r}; measures: auto, {', '.join(mean)}")
        return (np.concatenate([np.ravel(mean[n]) for n in names]).astype(float),
                np.concatenate([np.ravel(half[n]) for n in names]).astype(float))

    def relative(mean, half):
        x, h = selected(mean, half)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(x > 0, h / np.where(x > 0, x, 1.0), 0.0)

    def precise(mean, half):
        return bool(np.all(relative(mean, half) <= precision))

    if replications > 1:
        limit = max(replications, max_events // (warmup + events)) if precision is not None else replications
        runs = _replications(make_chain, int(seed), warmup, events, replications, limit, workers, scheduler)
        kept = [next(runs) for _ in range(replications)]
        mean, half, total = estimate(kept)
        while precision is not None and not precise(mean, half) and len(kept) < limit:
            kept.append(next(runs))
            mean, half, total = estimate(kept)
        runs.close()
        spent = len(kept) * (warmup + events)
        how = f"{len(kept)} replications of {warmup:,} + {events:,} events, seeds {seed}-{seed + len(kept) - 1}"
        method = "replications"
    else:
        chain = make_chain(int(seed))
        chain.run(warmup)
        size = max(1, events // batches)
        kept = [chain.run(size) for _ in range(batches)]
        spent = warmup + size * batches
        mean, half, total = estimate(kept)
        while precision is not None and not precise(mean, half) and spent + size * batches <= max_events:
            # double the batch length: run as much again, then merge neighbouring batches
            kept += [chain.run(size) for _ in range(batches)]
            spent += size * batches
            kept = [merge(kept[2 * i], kept[2 * i + 1]) for i in range(batches)]
            size *= 2
            mean, half, total = estimate(kept)
        how = f"{spent:,} events ({warmup:,} warm-up), {batches} batches, seed {seed}"
        method = "batch means"
    reached = precision is None or precise(mean, half)
    return Estimate(mean=mean, half=half, total=total, spent=spent, how=how, reached=reached, method=method)


def _replication(make_chain, seed: int, warmup: int, events: int) -> dict:
    """One independent replication's accumulators (module level: Dask workers run it)."""
    chain = make_chain(seed)
    chain.run(warmup)
    return chain.run(events)


def _replications(make_chain, seed, warmup, events, first, limit, workers, scheduler):
    """Replications ``seed``, ``seed + 1``, ... in order, at most ``limit``: computed here
    one by one, or on a Dask cluster (``first`` at once, then one round of as many as
    there are workers at a time, ahead of what the caller has taken)."""
    if not (workers or scheduler):
        for index in range(limit):
            yield _replication(make_chain, seed + index, warmup, events)
        return
    from .cluster import dask_client, worker_count

    with dask_client(scheduler, workers) as client:
        [shared] = client.scatter([make_chain], broadcast=True)
        futures = []

        def submit(count):
            for index in range(len(futures), min(limit, len(futures) + count)):
                futures.append(client.submit(_replication, shared, seed + index, warmup, events, pure=False))

        submit(first)
        for index in range(limit):
            if index == len(futures):
                submit(worker_count(client, workers))
            yield futures[index].result()
