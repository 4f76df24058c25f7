"""Deprecated (removed in 0.3): use :mod:`calibration.studies.cli`."""
from ._moved import reexport

reexport(globals(), 'calibration.studies.cli')
