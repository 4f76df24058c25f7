"""Deprecated (removed in 0.3): use :mod:`calibration.studies.tpcw`."""
from ._moved import reexport

reexport(globals(), 'calibration.studies.tpcw')

if __name__ == "__main__":
    import sys

    sys.exit(main())  # noqa: F821 (re-exported)
