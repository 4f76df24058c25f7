"""Deprecated (removed in 0.3): use :mod:`calibration.profiles.tpcc_smp` and :mod:`calibration.studies.tpcc`."""
from ._moved import reexport

reexport(globals(), 'calibration.profiles.tpcc_smp', 'calibration.studies.tpcc')

if __name__ == "__main__":
    import sys

    sys.exit(main())  # noqa: F821 (re-exported)
