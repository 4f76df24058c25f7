"""The one TOML reader of every file the project reads (network files, model files,
workload manifests): the standard library's ``tomllib`` from Python 3.11, else the
``tomli`` package it grew from (same interface)."""
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["tomllib"]
