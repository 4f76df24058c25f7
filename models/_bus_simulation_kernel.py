"""The compiled event loop of :mod:`models.bus_simulation`: processors computing and
stalling on FCFS bus phases, posted transactions from computing processors.  Private:
only :class:`models.bus_simulation._Chain` calls it."""
import numpy as np

from mva.jit import jit
from mva.variates import exponential, service_time


@jit
def start(compute_end, posted_next, compute, posted_rate):
    for p in range(compute_end.shape[0]):
        compute_end[p] = exponential(compute)
        if posted_rate > 0.0:
            posted_next[p] = exponential(1.0 / posted_rate)


@jit(inline=True)
def _join(s, job, t, fifo, head, count, done, started, mean, scv):
    """Job ``job`` (processor, or -1 posted) queues at station ``s``; served at once if idle."""
    size = fifo.shape[1]
    if count[s] == size:
        return 1
    fifo[s, (head[s] + count[s]) % size] = job
    count[s] += 1
    if count[s] == 1:
        done[s] = t + service_time(mean, scv)
        started[s] = t
    return 0


@jit
def run(n_events, clock, phase, compute_end, posted_next, mark, fifo, head, count, done, started,
         phase_station, phase_mean, phase_scv, compute, posted_rate, posted_station, posted_mean, posted_scv,
         acc, busy):
    """Advance ``n_events`` events (compute ends, posted issues, service completions).

    ``acc``: compute time completed, stalls completed, their summed latency, posted
    transactions issued; ``busy``: service time completed per station.  Returns 1 if a
    station's queue overflowed, else 0.
    """
    n_proc = phase.shape[0]
    n_stat = done.shape[0]
    size = fifo.shape[1]
    last = phase_station.shape[0] - 1
    t = clock[0]
    for _ in range(n_events):
        # the earliest timer: a station's completion, a compute end or a posted issue
        best, kind, who = np.inf, 0, 0
        for s in range(n_stat):
            if done[s] < best:
                best, kind, who = done[s], 0, s
        for p in range(n_proc):
            if phase[p] < 0:
                if compute_end[p] < best:
                    best, kind, who = compute_end[p], 1, p
                if posted_next[p] < best:
                    best, kind, who = posted_next[p], 2, p
        t = best
        if kind == 1:                       # a miss: the processor stalls
            acc[0] += t - mark[who]
            phase[who] = 0
            mark[who] = t
            posted_next[who] = np.inf
            s0 = phase_station[0]
            if _join(s0, who, t, fifo, head, count, done, started, phase_mean[0], phase_scv[0]):
                return 1
        elif kind == 2:                     # a posted transaction leaves the computing processor
            acc[3] += 1.0
            posted_next[who] = t + exponential(1.0 / posted_rate)
            if _join(posted_station, -1, t, fifo, head, count, done, started, posted_mean, posted_scv):
                return 1
        else:                               # station ``who`` completes its head job
            s = who
            busy[s] += t - started[s]
            job = fifo[s, head[s]]
            head[s] = (head[s] + 1) % size
            count[s] -= 1
            if count[s] > 0:
                nxt = fifo[s, head[s]]
                if nxt < 0:
                    done[s] = t + service_time(posted_mean, posted_scv)
                else:
                    done[s] = t + service_time(phase_mean[phase[nxt]], phase_scv[phase[nxt]])
                started[s] = t
            else:
                done[s] = np.inf
            if job >= 0:
                q = phase[job]
                if q < last:
                    phase[job] = q + 1
                    if _join(phase_station[q + 1], job, t, fifo, head, count, done, started, phase_mean[q + 1],
                             phase_scv[q + 1]):
                        return 1
                else:                       # the stall ends: compute again
                    acc[1] += 1.0
                    acc[2] += t - mark[job]
                    phase[job] = -1
                    compute_end[job] = t + exponential(compute)
                    mark[job] = t
                    if posted_rate > 0.0:
                        posted_next[job] = t + exponential(1.0 / posted_rate)
    clock[0] = t
    return 0
