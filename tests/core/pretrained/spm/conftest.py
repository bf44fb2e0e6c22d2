"""Session fixtures: SentencePiece models trained once (see ``spm_helpers``)."""

from __future__ import annotations

import pytest

from .spm_helpers import trained_model


@pytest.fixture(scope="session")
def sp_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("sentencepiece-models")


@pytest.fixture(scope="session")
def sp_model(sp_folder):
    """``sp_model(name)``: the path of a trained model (see `TRAINED`)."""
    return lambda name: trained_model(name, sp_folder)
