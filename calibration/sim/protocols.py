"""Snooping coherence protocols as explicit state tables: MESI, AMSD and PSCR.

Each protocol is written below as two readable tables, exactly as in
``docs/coherence.md`` §2-§4, and compiled once into dense ``int8`` arrays
that the simulator kernel indexes; the kernel itself knows no protocol.

* Processor side: ``(state, access, private) -> bus transaction`` and, given the snoop
  responses seen on the bus, ``-> next state``.
* Snoop side: ``(state, remote transaction, private) -> next state, responses asserted,
  whether this cache supplies the block, whether memory is updated from it, and what
  kind of invalidation (coherence or PSCR selective) removes the copy``.

Sources: MESI as the Pentium Pro flavour (Shanley 1999, Foglia et al. 2004, ref. [45]; only a dirty
holder supplies cache-to-cache, memory updated when ``M`` supplies a read);
AMSD after Cox & Fowler 1993 / Stenström et al. 1993 with the bus-side state set of
docs/coherence.md §3 (``S2``, ``MC``, ``MD``: our reconstruction); PSCR after Giorgi &
Prete 1999 as the Dragon-with-Invalid write-update set plus the selective-invalidation
(``PRIV``) line of Foglia et al. 2004, §2 (docs/coherence.md §4, reconstructed).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["STATES", "TRANSACTIONS", "PROTOCOLS", "Protocol", "protocol", "WRITABLE", "DIRTY"]

# One state numbering shared by all protocols (each uses a subset).  PSCR's Dirty is M.
I, S, E, M, S2, MC, MD, SO = range(8)
STATES = ("I", "S", "E", "M", "S2", "MC", "MD", "SO")
N_STATES = len(STATES)

# Bus transactions issued by a processor.  RB_WR is PSCR's write miss on a shared page:
# a read-block, then a write (update) transaction if another copy answered SHARED.
NONE, RB, RIB, INV, WR, RB_WR = range(6)
TRANSACTIONS = ("none", "read-block", "read-and-invalidate-block", "invalidate", "write", "read-block+write")

# Snoop response lines (bit mask): SHARED, dirty intervention (cache supplies), migratory.
SH, DI, MIG = 1, 2, 4

# Invalidation kinds kept with a tag that lost its data (Foglia et al. 2004, §4 invalidation miss).
INV_NONE, INV_COHERENCE, INV_SELECTIVE = 0, 1, 2

WRITABLE = np.zeros(N_STATES, dtype=np.bool_)   # may be written without a bus transaction
WRITABLE[[E, M, MC, MD]] = True
DIRTY = np.zeros(N_STATES, dtype=np.bool_)      # memory is stale: write back on replacement
DIRTY[[M, MD, SO]] = True

READ, WRITE = 0, 1


@dataclass(frozen=True)
class Protocol:
    """Dense tables of one protocol, indexed by the simulator kernel.

    proc_txn[state, access, private] : transaction a processor access issues
    proc_next[state, access, private, responses] : the requester's next state
    snoop_next[state, transaction, private] : a remote copy's next state
    snoop_resp[state, transaction, private] : response lines the remote copy asserts
    snoop_supply[state, transaction, private] : 1 if the remote copy supplies the block
    snoop_memupd[state, transaction, private] : 1 if memory takes the supplied block
    snoop_invkind[state, transaction, private] : INV_COHERENCE / INV_SELECTIVE if the
        copy is removed (tag kept for classification), else INV_NONE
    uses_private_line : the requester drives PRIV from the page attribute (PSCR)
    """

    name: str
    states: tuple
    proc_txn: np.ndarray
    proc_next: np.ndarray
    snoop_next: np.ndarray
    snoop_resp: np.ndarray
    snoop_supply: np.ndarray
    snoop_memupd: np.ndarray
    snoop_invkind: np.ndarray
    uses_private_line: bool


def _responses_matching(pattern: str):
    """Response masks selected by a pattern over {SH, DI, MIG}: 'DI+MIG', 'SH', 'none', '*'."""
    masks = range(8)
    if pattern == "*":
        return list(masks)
    if pattern == "none":
        return [0]
    need = 0
    for name in pattern.split("+"):
        need |= {"SH": SH, "DI": DI, "MIG": MIG}[name]
    return [r for r in masks if r & need == need]


def _compile(name, processor, outcomes, snoop, uses_private_line, states):
    """Build the dense tables from the readable rules below.

    processor: {(state, access, private or '*'): transaction}
    outcomes: {(state, access, private or '*'): [(response pattern, next state), ...]},
        the first matching pattern wins (list the most specific first)
    snoop: {(state, transaction, private or '*'): (next, responses, supply, memupd, invkind)}
    """
    proc_txn = np.full((N_STATES, 2, 2), -1, dtype=np.int8)
    proc_next = np.full((N_STATES, 2, 2, 8), -1, dtype=np.int8)
    for (state, access, priv), txn in processor.items():
        for pv in ((0, 1) if priv == "*" else (priv,)):
            proc_txn[state, access, pv] = txn
    for (state, access, priv), rules in outcomes.items():
        for pv in ((0, 1) if priv == "*" else (priv,)):
            for resp in range(8):
                for pattern, nxt in rules:
                    if resp in _responses_matching(pattern):
                        proc_next[state, access, pv, resp] = nxt
                        break
    shape = (N_STATES, 6, 2)
    snoop_next = np.tile(np.arange(N_STATES, dtype=np.int8)[:, None, None], (1, 6, 2))
    snoop_resp = np.zeros(shape, dtype=np.int8)
    snoop_supply = np.zeros(shape, dtype=np.int8)
    snoop_memupd = np.zeros(shape, dtype=np.int8)
    snoop_invkind = np.zeros(shape, dtype=np.int8)
    for (state, txn, priv), (nxt, resp, supply, memupd, invkind) in snoop.items():
        for pv in ((0, 1) if priv == "*" else (priv,)):
            txns = (RB, RB_WR) if txn == RB else (txn,)   # RB_WR snoops as a read-block first
            for t in txns:
                snoop_next[state, t, pv] = nxt
                snoop_resp[state, t, pv] = resp
                snoop_supply[state, t, pv] = supply
                snoop_memupd[state, t, pv] = memupd
                snoop_invkind[state, t, pv] = invkind
    for state in states:
        for access in (READ, WRITE):
            for pv in (0, 1):
                if proc_txn[state, access, pv] < 0 or (proc_next[state, access, pv] < 0).any():
                    raise AssertionError(f"{name}: no rule for {STATES[state]} access {access} private {pv}")
    return Protocol(name, tuple(STATES[s] for s in states), proc_txn, proc_next, snoop_next, snoop_resp,
                    snoop_supply, snoop_memupd, snoop_invkind, uses_private_line)


C = INV_COHERENCE

# --- MESI (docs/coherence.md §2) --------------------------------------------------------
_MESI = _compile(
    "mesi",
    processor={(I, READ, "*"): RB, (I, WRITE, "*"): RIB,
               (S, READ, "*"): NONE, (S, WRITE, "*"): INV,
               (E, READ, "*"): NONE, (E, WRITE, "*"): NONE,
               (M, READ, "*"): NONE, (M, WRITE, "*"): NONE},
    outcomes={(I, READ, "*"): [("SH", S), ("*", E)],
              (I, WRITE, "*"): [("*", M)],
              (S, READ, "*"): [("*", S)], (S, WRITE, "*"): [("*", M)],
              (E, READ, "*"): [("*", E)], (E, WRITE, "*"): [("*", M)],
              (M, READ, "*"): [("*", M)], (M, WRITE, "*"): [("*", M)]},
    #               next  responses supply memupd invalidation
    snoop={(S, RB, "*"): (S, SH, 0, 0, 0), (S, RIB, "*"): (I, 0, 0, 0, C), (S, INV, "*"): (I, 0, 0, 0, C),
           (E, RB, "*"): (S, SH, 0, 0, 0), (E, RIB, "*"): (I, 0, 0, 0, C),
           (M, RB, "*"): (S, SH | DI, 1, 1, 0), (M, RIB, "*"): (I, DI, 1, 0, C)},
    uses_private_line=False, states=(I, S, E, M))

# --- AMSD (docs/coherence.md §3) --------------------------------------------------
_AMSD = _compile(
    "amsd",
    processor={(I, READ, "*"): RB, (I, WRITE, "*"): RIB,
               (S, READ, "*"): NONE, (S, WRITE, "*"): INV,
               (S2, READ, "*"): NONE, (S2, WRITE, "*"): INV,
               (E, READ, "*"): NONE, (E, WRITE, "*"): NONE,
               (M, READ, "*"): NONE, (M, WRITE, "*"): NONE,
               (MC, READ, "*"): NONE, (MC, WRITE, "*"): NONE,
               (MD, READ, "*"): NONE, (MD, WRITE, "*"): NONE},
    outcomes={(I, READ, "*"): [("DI+MIG", MC), ("DI", S2), ("SH", S), ("*", E)],
              (I, WRITE, "*"): [("MIG", MD), ("*", M)],
              (S, READ, "*"): [("*", S)], (S, WRITE, "*"): [("*", M)],
              (S2, READ, "*"): [("*", S2)], (S2, WRITE, "*"): [("*", MD)],   # detection
              (E, READ, "*"): [("*", E)], (E, WRITE, "*"): [("*", M)],
              (M, READ, "*"): [("*", M)], (M, WRITE, "*"): [("*", M)],
              (MC, READ, "*"): [("*", MC)], (MC, WRITE, "*"): [("*", MD)],   # the saved INV
              (MD, READ, "*"): [("*", MD)], (MD, WRITE, "*"): [("*", MD)]},
    snoop={(S, RB, "*"): (S, SH, 0, 0, 0), (S, RIB, "*"): (I, 0, 0, 0, C), (S, INV, "*"): (I, 0, 0, 0, C),
           (S2, RB, "*"): (S, SH, 0, 0, 0), (S2, RIB, "*"): (I, 0, 0, 0, C), (S2, INV, "*"): (I, 0, 0, 0, C),
           (E, RB, "*"): (S, SH, 0, 0, 0), (E, RIB, "*"): (I, 0, 0, 0, C),
           (M, RB, "*"): (S, SH | DI, 1, 1, 0), (M, RIB, "*"): (I, DI, 1, 0, C),
           (MC, RB, "*"): (S, SH, 0, 0, 0),                       # revert: read before write
           (MC, RIB, "*"): (I, MIG, 0, 0, C),
           (MD, RB, "*"): (I, DI | MIG, 1, 1, C),                 # self-invalidation (§3.6)
           (MD, RIB, "*"): (I, DI | MIG, 1, 0, C)},
    uses_private_line=False, states=(I, S, E, M, S2, MC, MD))

# --- PSCR (docs/coherence.md §4; M plays Dragon's Dirty) --------------------------
L = INV_SELECTIVE
_PSCR = _compile(
    "pscr",
    processor={(I, READ, "*"): RB, (I, WRITE, 0): RB_WR, (I, WRITE, 1): RB,
               (E, READ, "*"): NONE, (E, WRITE, "*"): NONE,
               (S, READ, "*"): NONE, (S, WRITE, "*"): WR,
               (SO, READ, "*"): NONE, (SO, WRITE, "*"): WR,
               (M, READ, "*"): NONE, (M, WRITE, "*"): NONE},
    outcomes={(I, READ, 0): [("SH", S), ("*", E)],
              (I, READ, 1): [("DI", M), ("*", E)],
              (I, WRITE, 0): [("SH", SO), ("*", M)],
              (I, WRITE, 1): [("*", M)],
              (E, READ, "*"): [("*", E)], (E, WRITE, "*"): [("*", M)],
              (S, READ, "*"): [("*", S)], (S, WRITE, "*"): [("SH", SO), ("*", M)],
              (SO, READ, "*"): [("*", SO)], (SO, WRITE, "*"): [("SH", SO), ("*", M)],
              (M, READ, "*"): [("*", M)], (M, WRITE, "*"): [("*", M)]},
    snoop={(E, RB, 0): (S, SH, 0, 0, 0), (E, RB, 1): (I, 0, 0, 0, L),
           (S, RB, 0): (S, SH, 0, 0, 0), (S, RB, 1): (I, 0, 0, 0, L), (S, WR, "*"): (S, SH, 0, 0, 0),
           (SO, RB, 0): (SO, SH | DI, 1, 0, 0), (SO, RB, 1): (I, DI, 1, 0, L), (SO, WR, "*"): (S, SH, 0, 0, 0),
           (M, RB, 0): (SO, SH | DI, 1, 0, 0), (M, RB, 1): (I, DI, 1, 0, L)},
    uses_private_line=True, states=(I, S, E, M, SO))

PROTOCOLS = {"mesi": _MESI, "amsd": _AMSD, "pscr": _PSCR}


def protocol(name: str) -> Protocol:
    """The compiled tables of protocol ``name`` (``mesi``, ``amsd`` or ``pscr``)."""
    from mva.errors import ModelError

    try:
        return PROTOCOLS[name.lower()]
    except KeyError:
        raise ModelError("protocol", f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}") from None
