"""Importing tokviz first asks numpy's OpenBLAS to let idle threads sleep at once, and leaves a
choice the environment already made alone (`tokviz/__init__.py`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SNIPPET = "import tokviz, numpy, os; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"


@pytest.mark.parametrize(("given", "seen"), [(None, "4"), ("9", "9")])
def test_openblas_thread_timeout(given, seen):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if given is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = given
    out = subprocess.run([sys.executable, "-c", SNIPPET], env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    assert out.stdout.strip() == seen
