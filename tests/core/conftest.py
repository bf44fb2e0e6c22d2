"""Test set-up for the core tests: keep Hypothesis's files out of the working directory.

Hypothesis stores its example database and caches in ./.hypothesis, and its pytest plugin
writes there while collecting, before any fixture runs; so this is a hook, run when this file
is loaded.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


def pytest_configure(config):
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # hypothesis is not installed: nothing to move
        return
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "tokviz-tests-hypothesis")
