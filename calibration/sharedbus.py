"""Deprecated (removed in 0.3): use :mod:`calibration.profiles.shared_bus` and :mod:`calibration.studies.shared_bus`."""
from ._moved import reexport

reexport(globals(), 'calibration.profiles.shared_bus', 'calibration.studies.shared_bus')

if __name__ == "__main__":
    import sys

    sys.exit(main())  # noqa: F821 (re-exported)
