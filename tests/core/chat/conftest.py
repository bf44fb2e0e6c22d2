"""The reference for the chat parity tests: transformers, offline."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def transformers():
    """The transformers module with the Hub offline (a local folder never needs the network; make
    sure of it); skipped with the reason when transformers is not installed."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_VERBOSITY", "error")
        yield pytest.importorskip("transformers", reason="the reference needs transformers (the test extra)")
