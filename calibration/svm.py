"""Deprecated (removed in 0.3): use :mod:`calibration.profiles.svm_cluster`."""
from ._moved import reexport

reexport(globals(), 'calibration.profiles.svm_cluster')
