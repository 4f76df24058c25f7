"""Network files: TOML or JSON, read into a validated :class:`~mva.network.Network`.

Format (TOML; JSON has the same structure, ``{"network": {...}, "station": [...]}``)::

    [network]
    name = "two-class example"
    time_unit = "s"             # the unit of every time below (a label for reports)
    classes = ["oltp", "batch"]
    population = [20, 4]        # closed classes (0 for an open class)
    think_time = [5.0, 0.0]     # per class, at the terminals
    arrival_rate = [0.0, 0.0]   # > 0 makes a class open

    [[station]]
    name = "cpu"
    type = "queue"              # queue | delay | multi | ld
    demand = [0.020, 0.150]     # per class, per interaction
    # servers = 4               # type = "multi"
    # capacity = [1.0, 1.9]     # type = "ld": alpha(1), alpha(2), ...
    # discipline = "fcfs"       # queue, multi: ps (default) | fcfs | priority (queue)
    # priority = [0, 1]         # discipline = "priority": per class, lower first, equal = one level
    # scv = 0.0                 # service variability: 1 exponential (default), 0 deterministic
    # visits = [1.0, 0.25]      # per class, per interaction (default 1): service per visit
    #                           # = demand / visits, what an FCFS arrival waits for per customer

Unknown keys are errors (a typo must not silently fall back to a default).  The solvers
are unit-agnostic: demands, think times and arrival rates only need one time unit, which
``time_unit`` names for the headers of reports (``throughput [1/s]``); without it they
say ``time unit``.
"""
from __future__ import annotations

import json
import os

from .errors import ModelError
from .tomlcompat import tomllib
from .network import Network, Station


__all__ = ["load_network", "read_document", "network_from_dict", "time_unit"]

#: What reports call the time unit of a network file that does not name one.
DEFAULT_TIME_UNIT = "time unit"

NETWORK_KEYS = ("name", "time_unit", "classes", "population", "think_time", "arrival_rate")
STATION_KEYS = ("name", "type", "demand", "servers", "capacity", "discipline", "priority", "scv", "visits")


def read_document(path: str) -> dict:
    """Parse a TOML or JSON file (by extension; otherwise by trying both) into a dict."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise ModelError(path, "no such file") from None
    except IsADirectoryError:
        raise ModelError(path, "is a directory, not a network file") from None
    except OSError as exc:
        raise ModelError(path, f"cannot read: {exc.strerror}") from None
    ext = os.path.splitext(path)[1].lower()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(path, "is not UTF-8 text") from None
    if ext == ".json":
        return _parse_json(text, path)
    if ext == ".toml":
        return _parse_toml(text, path)
    try:
        return _parse_json(text, path)
    except ModelError:
        return _parse_toml(text, path)


def _parse_json(text, path):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelError(path, f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise ModelError(path, "the top level must be an object with 'network' and 'station'")
    return doc


def _parse_toml(text, path):
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(path, f"malformed TOML: {exc}") from None


def _check_keys(table: dict, allowed, where: str):
    if not isinstance(table, dict):
        raise ModelError(where, f"must be a table, got {type(table).__name__}")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ModelError(f"{where}.{unknown[0]}", f"unknown key; valid keys: {', '.join(allowed)}")


def time_unit(head) -> str:
    """The ``time_unit`` of a network file's ``[network]`` table (a non-empty string), or
    :data:`DEFAULT_TIME_UNIT`."""
    unit = head.get("time_unit", DEFAULT_TIME_UNIT) if isinstance(head, dict) else DEFAULT_TIME_UNIT
    if not isinstance(unit, str) or not unit.strip():
        raise ModelError("network.time_unit", f"must be a non-empty string such as \"s\" or \"ms\", got {unit!r}")
    return unit.strip()


def network_from_dict(doc: dict) -> Network:
    """Build a :class:`Network` from the parsed structure of a network file."""
    _check_keys(doc, ("network", "station"), "file")
    head = doc.get("network", {})
    _check_keys(head, NETWORK_KEYS, "network")
    time_unit(head)
    stations_raw = doc.get("station")
    if stations_raw is None or (isinstance(stations_raw, list) and len(stations_raw) == 0):
        raise ModelError("station", "the network has no stations")
    if not isinstance(stations_raw, list):
        raise ModelError("station", "must be a list of station tables ([[station]] in TOML)")
    stations = []
    for i, st in enumerate(stations_raw):
        where = f"station[{st.get('name', i) if isinstance(st, dict) else i}]"
        _check_keys(st, STATION_KEYS, where)
        for key in ("name", "type", "demand"):
            if key not in st:
                raise ModelError(f"{where}.{key}", "is missing")
        try:
            stations.append(Station(name=st["name"], kind=st["type"], demand=st["demand"],
                                    servers=st.get("servers", 1), capacity=st.get("capacity"),
                                    discipline=st.get("discipline", "ps"), priority=st.get("priority"),
                                    scv=st.get("scv", 1.0), visits=st.get("visits")))
        except ModelError as exc:       # the file's key is ``type``, the API's ``kind``
            if exc.field.endswith(".kind"):
                raise ModelError(exc.field.removesuffix(".kind") + ".type", exc.problem) from None
            raise
    if "population" not in head and "arrival_rate" not in head:
        raise ModelError("network.population", "is missing (give population and/or arrival_rate)")
    name = head.get("name", "")
    if not isinstance(name, str):
        raise ModelError("network.name", f"must be a string, got {name!r}")
    return Network(stations=stations, classes=head.get("classes"), population=head.get("population"),
                   think_time=head.get("think_time"), arrival_rate=head.get("arrival_rate"),
                   name=name)


def load_network(path: str) -> Network:
    """Read a TOML or JSON network file.

    Examples
    --------
    >>> net = load_network("data/examples/two-class.toml")
    >>> net.classes, net.population
    (('oltp', 'batch'), (20, 4))

    Raises
    ------
    ModelError
        Unreadable or malformed file, unknown key, or invalid network; the message names
        the field.
    """
    return network_from_dict(read_document(path))
