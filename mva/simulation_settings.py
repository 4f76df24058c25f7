"""How long and how precisely a discrete-event simulation runs: one type for the
simulation of network files (:func:`mva.simulation.simulate_network`), of the machines
the model kinds approximate (``SharedBus.simulate``, ``TPCCSMP.simulate``) and for the
command line's ``--method simulation`` options.

Each simulator states its defaults in one visible place, a module or class constant of
this type (``NETWORK_SIMULATION`` here, ``SharedBus.SIMULATION``,
``models.tpcc_smp.simulation.SIMULATION``); a caller changes any field by keyword.

Example: a kind's defaults with two fields changed, and a bad one named

>>> s = SimulationSettings(events=400_000).with_options(seed=7, precision=0.01)
>>> s.seed, s.events, s.warmup_events, s.precision
(7, 400000, 40000, 0.01)
>>> SimulationSettings().with_options(batches=1)
Traceback (most recent call last):
...
mva.errors.ModelError: batches: must be an integer >= 2, got 1
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .errors import ModelError

__all__ = ["SimulationSettings", "chosen_settings", "NETWORK_SIMULATION", "SETTING_NAMES", "MIN_BATCH_EVENTS", "MAX_EVENTS"]

#: Fewest events in a batch (or a replication): shorter batches are so correlated, and
#: so often see a class complete nothing, that Student's t over their means is no
#: interval at all (20 batches of one event gave half-widths of infinity).
MIN_BATCH_EVENTS = 1_000

#: Most events one run may spend (warm-up, events and replications together): about
#: 10 minutes of a network simulation on one core at the measured 20 M events/s.
MAX_EVENTS = 10_000_000_000


def _integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


@dataclass(frozen=True)
class SimulationSettings:
    """Run settings of a discrete-event simulation, checked at construction.

    ``seed``: of the random stream (the same seed gives the same result; replication k
    uses ``seed + k``); ``events``: events after the warm-up; ``warmup``: events
    discarded first (None: a tenth of ``events``); ``batches``: batch means of one run
    (>= 2); ``replications``: independent runs of ``warmup + events`` events each (more
    than one: intervals from the replication means); ``confidence``: level of the
    intervals; ``precision``: continue until every positive entry of the measure
    ``target`` has a half-width of at most this fraction of itself (``"auto"``: the
    measures the simulator does not know in advance, its own choice; None: one run of
    ``events``), or ``max_events`` are spent; ``workers``, ``scheduler``: run the
    replications on a local Dask cluster of that many processes, or on the running
    scheduler at that address, with the result of a serial run.
    """

    seed: int = 1
    events: int = 2_000_000
    warmup: int | None = None
    batches: int = 20
    replications: int = 1
    confidence: float = 0.95
    precision: float | None = None
    target: str = "auto"
    max_events: int = 200_000_000
    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self):
        if not _integer(self.seed) or not 0 <= self.seed < 2 ** 32:
            raise ModelError("seed", f"must be an integer in [0, 2^32), got {self.seed!r}")
        for name, low in (("events", 1), ("batches", 2), ("max_events", 1), ("replications", 1), ("warmup", 0),
                          ("workers", 1)):
            value = getattr(self, name)
            if value is None and name in ("warmup", "workers"):
                continue
            if not _integer(value) or value < low:
                raise ModelError(name, f"must be an integer >= {low}, got {value!r}")
        if not isinstance(self.confidence, (int, float)) or not 0.0 < self.confidence < 1.0:
            raise ModelError("confidence", f"must be between 0 and 1, got {self.confidence!r}")
        if self.precision is not None and not (isinstance(self.precision, (int, float))
                                               and 0.0 < self.precision < 1.0):
            raise ModelError("precision", f"must be a fraction between 0 and 1, got {self.precision!r}")
        self._check_run_length()
        if (self.workers or self.scheduler) and self.replications < 2:
            raise ModelError("workers", "distributes independent replications: give replications >= 2")

    def _check_run_length(self):
        """Enough events per batch for an interval; few enough events to end."""
        per_sample = self.events if self.replications > 1 else self.events // self.batches
        if per_sample < MIN_BATCH_EVENTS:
            least = MIN_BATCH_EVENTS * (1 if self.replications > 1 else self.batches)
            where = "replication" if self.replications > 1 else f"batch of {self.batches}"
            raise ModelError("events", f"{self.events:,} events leave {per_sample:,} per {where}, too few for a "
                                       f"confidence interval: give at least {least:,}")
        spent = (self.warmup_events + self.events) * self.replications
        for name, value in (("events", spent), ("max_events", self.max_events)):
            if value > MAX_EVENTS:
                raise ModelError(name, f"{value:,} events is beyond the bound of {MAX_EVENTS:,} (warm-up, events "
                                       "and replications together; use --precision to stop when precise enough)")

    @property
    def warmup_events(self) -> int:
        """The warm-up in events: ``warmup``, or a tenth of ``events``."""
        return int(self.events // 10 if self.warmup is None else self.warmup)

    def with_options(self, **options) -> SimulationSettings:
        """These settings with ``options`` (field names) changed; a name that is no
        field is a :class:`ModelError` naming it."""
        unknown = sorted(set(options) - set(SETTING_NAMES))
        if unknown:
            raise ModelError(unknown[0], f"is not a simulation setting; valid: {', '.join(SETTING_NAMES)}")
        return dataclasses.replace(self, **options) if options else self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


#: Every field of :class:`SimulationSettings`, in order.
SETTING_NAMES = tuple(f.name for f in dataclasses.fields(SimulationSettings))

def chosen_settings(settings, default: SimulationSettings, **options) -> SimulationSettings:
    """``settings`` (or ``default`` when None) with ``options`` changed; anything but a
    :class:`SimulationSettings` is a :class:`ModelError` naming ``settings``."""
    if settings is None:
        settings = default
    elif not isinstance(settings, SimulationSettings):
        raise ModelError("settings", f"expected a SimulationSettings (or keyword options such as events=100000), "
                                     f"got {settings!r}")
    return settings.with_options(**options)


#: The defaults of :func:`mva.simulation.simulate_network`.
NETWORK_SIMULATION = SimulationSettings()
