"""Executable documentation: the docstring examples of every public module run."""
import doctest
import importlib
import pkgutil

import pytest

import mva

MODULES = sorted(m.name for m in pkgutil.iter_modules(mva.__path__, "mva.") if m.name != "mva.__main__")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


def test_public_api_is_declared():
    for name in mva.__all__:
        assert hasattr(mva, name), name
