"""A Dask client for work that outgrows one process: a running scheduler's address, or a
local cluster of worker processes started (and stopped) for the job.  Used by sweeps
(:mod:`mva.sweep`) and by simulation replications (:mod:`mva.simulation`)."""
from __future__ import annotations

from contextlib import contextmanager

from .errors import ModelError

__all__ = ["dask_client", "worker_count"]


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None):
    """Yield a ``dask.distributed.Client`` connected to ``scheduler`` (an address), or to
    a local cluster of ``workers`` single-threaded processes; closed on exit.

    Raises
    ------
    ModelError
        dask.distributed is not installed (field ``--workers``), or the scheduler cannot
        be reached (field ``--scheduler``).
    """
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask is an optional extra
        raise ModelError("--workers", "needs dask.distributed: pip install 'mva-smp[distributed]'") from None
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout="10s")
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
    except OSError as exc:
        raise ModelError("--scheduler", f"cannot reach {scheduler}: {exc}") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def worker_count(client, workers: int | None = None) -> int:
    """Workers the client reaches now (at least 1; ``workers`` when it reports none yet)."""
    return max(1, len(client.scheduler_info().get("workers", {})) or (workers or 1))
