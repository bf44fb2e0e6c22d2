"""Test set-up for the core tests of real tokenizers: tiktoken's cache pointed at a temporary folder
when a test asks for it, SentencePiece models trained once per session. The shared helpers live in
``tests/real_tokenizers.py``.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    """tiktoken's cache folder pointed at an empty temporary folder."""
    folder = tmp_path / "tiktoken-cache"
    folder.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    monkeypatch.delenv("TOKVIZ_VOCAB_DIR", raising=False)  # a classroom's folder would be found first
    return folder


@pytest.fixture(scope="session")
def sp_folder(tmp_path_factory):
    """A folder for the SentencePiece models trained once per session (``spm/spm_helpers.py``)."""
    return tmp_path_factory.mktemp("sentencepiece-models")


@pytest.fixture(scope="session")
def sp_model(sp_folder):
    """``sp_model(name)``: the path of a trained SentencePiece model (see ``TRAINED``)."""
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    return lambda name: trained_model(name, sp_folder)
