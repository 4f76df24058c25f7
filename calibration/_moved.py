"""Old import paths kept for one release (0.2) after ``calibration/`` was split by role
(``sim/``, ``profiles/``, ``studies/``): each old module re-exports the new homes' public
names and warns with a :class:`DeprecationWarning`.  The list is in ``CHANGELOG.md``."""
from __future__ import annotations

import importlib
import warnings

__all__ = ["reexport", "moved_attributes"]


def reexport(namespace: dict, *modules: str) -> None:
    """Warn that the module owning ``namespace`` moved to ``modules``, then copy their
    public names (``__all__``) into it."""
    warnings.warn(f"{namespace['__name__']} is deprecated and will be removed in 0.3; use "
                  f"{' and '.join(modules)}", DeprecationWarning, stacklevel=3)
    for name in modules:
        module = importlib.import_module(name)
        namespace.update({k: getattr(module, k) for k in module.__all__})


def moved_attributes(module: str, moved: dict):
    """A module ``__getattr__`` serving the old names in ``moved`` (``{old name: "new.module.new_name"}``)
    with a :class:`DeprecationWarning`."""
    def __getattr__(name):
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home, _, new = moved[name].rpartition(".")
        warnings.warn(f"{module}.{name} is deprecated and will be removed in 0.3; use {moved[name]}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(home), new)
    return __getattr__
