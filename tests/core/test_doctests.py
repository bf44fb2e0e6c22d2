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
    """The test above runs something: core's docstrings hold over a hundred examples (counted, not
    run again)."""
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for n in MODULES for t in finder.find(importlib.import_module(n)))
    assert examples > 100
