"""Test set-up for the pretrained-tokenizer tests: Hypothesis's files out of the working
directory, and tiktoken's cache pointed at a temporary folder when a test asks for it. The shared
helpers live in ``pretrained_helpers.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


def pytest_configure(config):
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:
        return
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "tokviz-tests-hypothesis")


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    """tiktoken's cache folder pointed at an empty temporary folder."""
    folder = tmp_path / "tiktoken-cache"
    folder.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    return folder
