"""Known differing pairs, built offline from the shared tokenizer files."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shared_file
from tokviz.core import TrainSettings, train
from tokviz.core.loading import open_timeline
from tokviz.core.parity import Side

GPT2 = ("vocab", "hf", "gpt2", "tokenizer.json")
MISTRAL = ("vocab", "hf", "mistral-7b-v0.1")


def edited_gpt2(tmp_path, edit, name: str) -> Side:
    """GPT-2's tokenizer.json with one change (`edit(config)`), as a side labelled `name`."""
    config = json.loads(shared_file(*GPT2).read_text(encoding="utf-8"))
    edit(config)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return Side(name, open_timeline(str(path)))


@pytest.fixture(scope="module")
def gpt2() -> Side:
    return Side("gpt2", open_timeline(str(shared_file(*GPT2))))


@pytest.fixture(scope="module")
def mistral() -> tuple[Side, Side]:
    """Mistral's tokenizer.json and tokenizer.model."""
    folder = shared_file(*MISTRAL)
    return (Side("json", open_timeline(str(folder / "tokenizer.json"))),
            Side("model", open_timeline(str(folder / "tokenizer.model"))))


@pytest.fixture(scope="module")
def trained():
    """A byte-level BPE trained on a small text (40 merges)."""
    text = "the lowest newest widest lower newer wider the the low new wide " * 20
    return train(TrainSettings(merges=40), texts=[text])
