"""The tables of Du & Zhang (2001) as transcribed in ``tables/`` (see its README for table and section).

The CSV files are package data, read through :mod:`importlib.resources`, so the model works
from an installed wheel as from a checkout.

Everything here is read once and cached; callers get numpy arrays in the paper's order:
transactions I..V (New-Order, Payment, Order-Status, Delivery, Stock-Level) and database
tables 1..9 (Warehouse ... History).
"""
from __future__ import annotations

from functools import cache
from importlib import resources

import numpy as np
import pandas as pd

__all__ = ["TRANSACTIONS", "TABLES", "table", "mix", "think_components", "visits",
           "table5_access", "operation_counts", "mapping", "configuration", "configuration_values", "published_tpmc",
           "published_utilization", "service_times", "CLOCK_HZ"]

#: The processor clock of the paper's machine (Table 7: 200 MHz), Hz: it turns the
#: tables' cycles into seconds.
CLOCK_HZ = 200e6
TRANSACTIONS = ("I", "II", "III", "IV", "V")
TABLES = tuple(range(1, 10))


@cache
def table(name: str) -> pd.DataFrame:
    """The packaged CSV ``tables/<name>.csv`` as a DataFrame (cached; do not modify)."""
    with (resources.files(__package__) / "tables" / f"{name}.csv").open("rb") as fh:
        return pd.read_csv(fh, keep_default_na=False, na_values=[""])


def mix() -> np.ndarray:
    """Transaction mix P_I..P_V (Table 2).  New-Order has no minimum; it gets the
    remainder, 1 - (43 + 4 + 4 + 4)% = 45%, as the paper's eq. 3.1 numbers imply
    (9.63 s keying = 0.45*18 + 0.43*3 + 3*0.04*2)."""
    share = table("table2_mix")["min_mix_percent"].to_numpy(dtype=float) / 100.0
    share[0] = 1.0 - np.nansum(share[1:])
    return share


def think_components() -> tuple[np.ndarray, np.ndarray]:
    """Minimum keying time and minimum mean think time per transaction type (s, Table 2)."""
    t2 = table("table2_mix")
    return (t2["min_keying_time_s"].to_numpy(dtype=float), t2["min_mean_think_time_s"].to_numpy(dtype=float))


def visits() -> dict[str, np.ndarray]:
    """Table 6 per transaction type: ``cpu`` (instructions), ``memory_read``,
    ``memory_write``, ``disk_read``, ``disk_write`` (visits per transaction)."""
    t6 = table("table6_visits")
    return {col: t6[col].to_numpy(dtype=float)
            for col in ("cpu", "memory_read", "memory_write", "disk_read", "disk_write")}


def table5_access() -> np.ndarray:
    """Table 5: probability that a database access goes to table 1..9."""
    return table("table5_access")["probability"].to_numpy(dtype=float)


def operation_counts() -> np.ndarray:
    """Mean database operations per transaction on each table, from Table 4, shape (5, 9).

    Each Table 4 term is ``coefficient x product(multipliers)``; a join J(t1, t2) counts
    one access to each table.  Multiplier values are in ``table4_parameters.csv`` (with
    their sources: the paper, the TPC-C specification, or our reconstruction).
    """
    params = dict(zip(table("table4_parameters")["name"], table("table4_parameters")["value"], strict=False))
    counts = np.zeros((len(TRANSACTIONS), len(TABLES)))
    for row in table("table4_operations").itertuples():
        factor = float(row.coefficient)
        for name in str(row.multipliers).split() if isinstance(row.multipliers, str) else ():
            factor *= float(params[name])
        counts[TRANSACTIONS.index(row.transaction), int(row.table) - 1] += factor
    return counts


def mapping(name: str) -> tuple[int, ...]:
    """Table-to-disk mapping ``f`` (disk of table 1..9, 1-based): f1, f2, f4 (eq. 5.11-5.13)
    or allocation A..E (Table 17)."""
    rows = table("mappings")
    rows = rows[rows["mapping"] == name]
    if len(rows) != len(TABLES):
        raise KeyError(f"no mapping {name!r} in mappings.csv")
    by_table = dict(zip(rows["table_id"], rows["disk"], strict=False))
    return tuple(int(by_table[t]) for t in TABLES)


def configuration(name: str) -> dict:
    """Row of Table 9: ``{"cpus", "io_buses", "disks", "note"}``."""
    t9 = table("table9_configurations").set_index("configuration")
    row = t9.loc[name]
    return {"cpus": int(row.cpus), "io_buses": int(row.io_buses), "disks": int(row.disks),
            "note": row.note if isinstance(row.note, str) else ""}


def configuration_values(name: str) -> dict:
    """Model parameter values of configuration ``name`` (C1..C9): Table 9's CPUs, I/O buses
    and disks, and the table-to-disk mapping f1, f2 or f4 by disk count (eq. 5.11-5.13)."""
    c = configuration(name)
    return {"cpus": c["cpus"], "io_buses": c["io_buses"], "disks": c["disks"],
            "mapping.table_to_disk": mapping({1: "f1", 2: "f2", 4: "f4"}[c["disks"]])}


def service_times() -> dict[str, float]:
    """Table 7 by symbol (cycles)."""
    t7 = table("table7_service_times")
    return dict(zip(t7["symbol"], t7["value_cycles"].astype(float), strict=False))


def published_tpmc() -> pd.DataFrame:
    """Published tpmC of Tables 10, 11 and 13-17, one row per value."""
    return table("published_tpmc")


def published_utilization() -> pd.DataFrame:
    """Published utilisations (%) of Tables 11, 12 and 18, one row per device."""
    return table("published_utilization")
