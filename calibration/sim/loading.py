"""A workload by name: a manifest, a single trace file or a generator preset (what
``mva trace stats`` and ``mva simulate`` take as WORKLOAD)."""
from __future__ import annotations

from pathlib import Path

from mva.errors import ModelError

from .synthetic import PRESETS, generate
from .workload import Workload, read_manifest, trace_workload

__all__ = ["load_workload"]


def load_workload(spec, nodes: int | None = None, default_nodes: int = 16, **generator_options) -> Workload:
    """A workload from a manifest (``.toml``), a single trace file (lackey, din, npz), a
    preset name of the synthetic generator (:data:`calibration.sim.synthetic.PRESETS`)
    or a parallel kernel (:data:`calibration.sim.parallel.KERNELS`, ``nodes`` processes,
    ``default_nodes`` if None)."""
    from .parallel import KERNELS, parallel_kernel

    text = str(spec)
    path = Path(text)
    if path.is_file():
        workload = read_manifest(path) if path.suffix == ".toml" else trace_workload(path)
        if nodes is not None:
            raise ModelError("--nodes", f"{path.name} fixes its processes ({len(workload.processes)}); --nodes sets "
                                        "those of a parallel kernel")
        return workload
    if text.lower() in PRESETS:
        if nodes is not None:
            raise ModelError("--nodes", "sets the processes of a parallel kernel, not of a preset")
        return generate(text.lower(), **generator_options)
    if text.lower() in KERNELS or text.lower().partition("-")[0] in KERNELS:
        count = default_nodes if nodes is None else nodes
        try:
            return parallel_kernel(text, processes=count, seed=generator_options.get("seed", 1))
        except ModelError as exc:         # the kernel's own names for what --nodes set
            if exc.field == "size":
                raise ModelError("--nodes", f"{text} divides its default problem among the nodes: give a divisor "
                                            f"of its size ({exc.problem.rsplit('got ', 1)[-1]}), got {count}") from None
            if exc.field == "nodes":
                raise ModelError("--nodes", exc.problem) from None
            raise
    raise ModelError("workload", f"{text!r} is neither a file nor a preset; presets: {', '.join(PRESETS)}; "
                                 f"parallel kernels: {', '.join(KERNELS)} (and NAME-restructured)")
