"""Deprecated (removed in 0.3): use :mod:`calibration.profiles.ccnuma`."""
from ._moved import reexport

reexport(globals(), 'calibration.profiles.ccnuma')
