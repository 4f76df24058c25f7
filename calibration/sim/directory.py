"""The cc-NUMA machine's invalidation-based directory protocol as explicit state tables.

The home node of a line serialises every request for it.  What the home does is one
table, ``(directory state, request) -> action, next directory state``; what a forwarded
request does to the owner's copy and what state a requester's fill installs are two
more.  The simulator kernel (:mod:`calibration.sim._ccnuma_kernel`) only indexes these
arrays, so a test can break one entry and watch the checking mode catch it, as it does
for the bus protocols (:mod:`calibration.sim.protocols`).

Source: Talbot & Kelly, "Stable performance for cc-NUMA using first-touch page placement
and reactive proxies" (1999), Table 1.1: an invalidation-based, sequentially consistent
protocol with a distributed directory after the Stanford Distributed-Directory protocol
(Thapar & Delagi, IEEE Computer 1990) whose sharing list is singly linked.  **Ours is a
full-map directory** (a bit per node, the owner's id) with the same messages per
transaction; invalidations are sent by the home one after another (one send gap each),
each sharer acknowledging to the writer, rather than walked down a linked list [REC].
Lines busy with a transaction (a forwarded request, a write collecting
acknowledgements) answer other requests with a negative acknowledgement and the
requester retries, as DASH does (Lenoski et al., ISCA 1990) [REC].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DirectoryProtocol", "DIRECTORY", "UNCACHED", "SHARED", "EXCLUSIVE", "READ", "WRITE", "UPGRADE",
           "I", "S", "M", "MEMORY", "FORWARD", "INVALIDATE"]

# directory states at the home
UNCACHED, SHARED, EXCLUSIVE = range(3)
DIR_STATES = ("uncached", "shared", "exclusive")
# requests a home serialises (an upgrade is a write by a node that holds a shared copy)
READ, WRITE, UPGRADE = range(3)
REQUESTS = ("read", "write", "upgrade")
# cache line states in a node's second-level cache
I, S, M = range(3)
CACHE_STATES = ("I", "S", "M")
# home actions (bit mask): supply from memory, forward to the owner, invalidate the sharers
MEMORY, FORWARD, INVALIDATE = 1, 2, 4


@dataclass(frozen=True)
class DirectoryProtocol:
    """Dense tables the kernel indexes.

    home_action[dir_state, request] : MEMORY | FORWARD | INVALIDATE bits (no MEMORY and no
        FORWARD: a grant without data, the requester's copy being current)
    home_next[dir_state, request] : the directory state after serialising the request
    owner_next[request] : the owner's copy after a forwarded read or write
    fill_state[request] : the state the requester's fill installs
    """

    name: str
    home_action: np.ndarray
    home_next: np.ndarray
    owner_next: np.ndarray
    fill_state: np.ndarray

    def arrays(self):
        return self.home_action, self.home_next, self.owner_next, self.fill_state


def _directory() -> DirectoryProtocol:
    action = np.zeros((3, 3), np.int8)
    nxt = np.zeros((3, 3), np.int8)
    rows = {  # (state, request): (action, next state)
        (UNCACHED, READ): (MEMORY, SHARED),
        (SHARED, READ): (MEMORY, SHARED),
        (EXCLUSIVE, READ): (FORWARD, SHARED),           # owner supplies, keeps a shared copy, writes back
        (UNCACHED, WRITE): (MEMORY, EXCLUSIVE),
        (SHARED, WRITE): (MEMORY | INVALIDATE, EXCLUSIVE),
        (EXCLUSIVE, WRITE): (FORWARD, EXCLUSIVE),       # owner supplies and invalidates its copy
        (SHARED, UPGRADE): (INVALIDATE, EXCLUSIVE),     # the requester's shared copy is current
        # an upgrade whose copy was lost meanwhile is served as a write (the kernel checks)
        (UNCACHED, UPGRADE): (MEMORY, EXCLUSIVE),
        (EXCLUSIVE, UPGRADE): (FORWARD, EXCLUSIVE),
    }
    for (st, req), (a, n) in rows.items():
        action[st, req], nxt[st, req] = a, n
    owner_next = np.array([S, I, I], np.int8)
    fill_state = np.array([S, M, M], np.int8)
    return DirectoryProtocol("directory", action, nxt, owner_next, fill_state)


DIRECTORY = _directory()
