"""A workload by name: a manifest, a single trace file or a generator preset (what
``mva trace stats`` and ``mva simulate`` take as WORKLOAD)."""
from __future__ import annotations

from pathlib import Path

from mva.errors import ModelError

from .synthetic import PRESETS, generate
from .workload import Workload, read_manifest, trace_workload

__all__ = ["load_workload"]


def load_workload(spec, **generator_options) -> Workload:
    """A workload from a manifest (``.toml``), a single trace file (lackey, din, npz) or
    a preset name of the synthetic generator (:data:`calibration.sim.synthetic.PRESETS`)."""
    text = str(spec)
    path = Path(text)
    if path.suffix == ".toml" and path.is_file():
        return read_manifest(path)
    if path.is_file():
        return trace_workload(path)
    if text.lower() in PRESETS:
        return generate(text.lower(), **generator_options)
    raise ModelError("workload", f"{text!r} is neither a file nor a preset; presets: {', '.join(PRESETS)}")
