"""The compiled generator of :mod:`calibration.sim.synthetic`: one process's references
from its parameter vector (stream choice, kernel bursts, address walks, read-modify-write
pairs).  Private: only :func:`calibration.sim.synthetic.generate` calls it."""
import numpy as np

from mva.jit import jit

from ._rng import next_random

# --- per-process parameters ----------------------------------------------------------
# stream ids
S_CODE, S_PRIVATE, S_SHARED, S_KCODE, S_KDATA, S_KPROC = range(6)
N_STREAMS = 6
# parameter vector (float64)
(P_P_KERNEL_ENTER, P_KERNEL_BURST, P_CODE, P_SHARED, P_SHARED_WRITE, P_OTHER_WRITE, P_JUMP, P_SEQ, P_SKEW,
 P_KHOT_SHARE, P_KPROC_SHARE, P_REUSE, P_SHARED_LOCAL, P_PART_START, P_PART_SIZE, P_RMW) = range(16)
N_PARAMS = 16
HISTORY = 32


@jit(inline=True)
def _rand(state):
    """Uniform [0, 1) from the simulator's xorshift64* generator."""
    return np.float64(next_random(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit
def fill_references(n, params, base, units, scan_rate, rng, pos, hist, scan, mode, op, addr, size, kernel):
    """``n`` references of one process.  ``base``/``units``: byte base and 32-byte units
    of each stream's region; ``scan_rate``: probability that a reference of the stream is
    the scan pointer's block; ``pos``: last byte address per stream; ``scan``: scan
    pointer per stream; ``mode[0]``: kernel references left in the current burst."""
    skew = params[P_SKEW]
    for i in range(n):
        if mode[1] >= 0:
            # the store half of a read-modify-write (locks, counters: migratory data)
            op[i] = 2
            addr[i] = np.uint64(mode[1])
            size[i] = 4
            kernel[i] = mode[2] == 1
            mode[1] = -1
            continue
        in_kernel = mode[0] > 0
        if in_kernel:
            mode[0] -= 1
        elif _rand(rng) < params[P_P_KERNEL_ENTER]:
            mode[0] = np.int64(-params[P_KERNEL_BURST] * np.log(1.0 - _rand(rng))) + 1
            in_kernel = True
        kernel[i] = in_kernel
        u = _rand(rng)
        if u < params[P_CODE]:
            s = S_KCODE if in_kernel else S_CODE
            a = 0
            size[i] = 4
        else:
            v = _rand(rng)
            if in_kernel:
                s = S_KPROC if v < params[P_KPROC_SHARE] else S_KDATA
                write = _rand(rng) < params[P_OTHER_WRITE]
            elif v < params[P_SHARED]:
                s = S_SHARED
                write = _rand(rng) < params[P_SHARED_WRITE]
            else:
                s = S_PRIVATE
                write = _rand(rng) < params[P_OTHER_WRITE]
            a = 2 if write else 1
            size[i] = 4
        op[i] = a
        nunits = units[s]
        # choose the address
        r = _rand(rng)
        if r < scan_rate[s]:
            unit = scan[s]
            scan[s] = (scan[s] + 1) % nunits
            offset = np.int64(_rand(rng) * 8) * 4
            pos[s] = base[s] + unit * 32 + offset
        elif a == 0:
            if _rand(rng) < params[P_JUMP] or pos[s] < base[s]:
                if _rand(rng) < params[P_REUSE]:
                    pos[s] = hist[s, np.int64(_rand(rng) * HISTORY)]      # back to a recent target: loops
                else:
                    unit = np.int64(nunits * _rand(rng) ** skew)
                    pos[s] = base[s] + unit * 32 + np.int64(_rand(rng) * 8) * 4
                hist[s, np.int64(_rand(rng) * HISTORY)] = pos[s]
            else:
                pos[s] += 4
                if pos[s] >= base[s] + nunits * 32:
                    pos[s] = base[s]
        elif s == S_KDATA and _rand(rng) < params[P_KHOT_SHARE]:
            # kernel common data: hot blocks, any word (locks, counters, run queues)
            unit = np.int64(min(64, nunits) * _rand(rng))
            pos[s] = base[s] + unit * 32 + np.int64(_rand(rng) * 8) * 4
        elif _rand(rng) < params[P_SEQ] and pos[s] >= base[s]:
            pos[s] += 4
            if pos[s] >= base[s] + nunits * 32:
                pos[s] = base[s]
        elif _rand(rng) < params[P_REUSE]:
            pos[s] = hist[s, np.int64(_rand(rng) * HISTORY)]              # a recently used word
        elif s == S_SHARED and _rand(rng) < params[P_SHARED_LOCAL]:
            # the part of the shared segment this process is working on (its buffers)
            unit = np.int64(params[P_PART_START]) + np.int64(params[P_PART_SIZE] * _rand(rng) ** skew)
            pos[s] = base[s] + (unit % nunits) * 32 + np.int64(_rand(rng) * 8) * 4
            hist[s, np.int64(_rand(rng) * HISTORY)] = pos[s]
        else:
            unit = np.int64(nunits * _rand(rng) ** skew)
            pos[s] = base[s] + unit * 32 + np.int64(_rand(rng) * 8) * 4
            hist[s, np.int64(_rand(rng) * HISTORY)] = pos[s]
        addr[i] = np.uint64(pos[s])
        if a == 2 and (s == S_SHARED or s == S_KDATA) and _rand(rng) < params[P_RMW]:
            op[i] = 1                   # read first; the write follows as the next reference
            mode[1] = pos[s]
            mode[2] = 1 if in_kernel else 0
