"""Test set-up for the pretrained-tokenizer tests: tiktoken's cache pointed at a temporary folder
when a test asks for it. The shared helpers live in ``pretrained_helpers.py``.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    """tiktoken's cache folder pointed at an empty temporary folder."""
    folder = tmp_path / "tiktoken-cache"
    folder.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    return folder
