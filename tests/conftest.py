"""Test set-up shared by every test: offscreen Qt, isolated settings, paths to ../shared data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any Qt import

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"
VOCAB = SHARED / "vocab"


def shared_file(*parts: str) -> Path:
    """Path to a file in ../shared, or skip the test (with the reason) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs ../shared/{'/'.join(parts)} (not present in this checkout)")
    return path


@pytest.fixture
def corpus_text():
    """Read the first `n` characters of a shared corpus: ``corpus_text("tinyshakespeare.txt", n)``."""

    def read(name: str, n: int | None = None) -> str:
        text = shared_file("corpora", name).read_text(encoding="utf-8")
        return text if n is None else text[:n]

    return read
