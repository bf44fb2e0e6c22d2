"""Every worked example in a core docstring is true (``doctest`` over all of ``tokviz.core``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tokviz.core

MODULES = sorted(m.name for m in pkgutil.walk_packages(tokviz.core.__path__, "tokviz.core."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_examples_exist():
    attempted = sum(doctest.testmod(importlib.import_module(n), report=False).attempted for n in MODULES)
    assert attempted > 100
