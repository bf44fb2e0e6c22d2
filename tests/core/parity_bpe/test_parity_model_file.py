"""The ``tokviz-parity-bpe`` model file: a round trip keeps every step's served document and savings,
and a damaged file is a one-line error."""

from __future__ import annotations

import json

import pytest

from tokviz.core.errors import ModelFormatError
from tokviz.core.model_files import load_model, save_model
from tokviz.core.parity_bpe import ParitySettings, ParityTimeline, train
from tokviz.core.parity_bpe.model_file import from_json, to_json

TEXT = ("Alpha\n  the cat sat on the mat, the cat sat\n\nBeta\n  der Kater saß auf der Matte, der Kater\n\n"
        "Gamma\n  il gatto sedeva sul tappeto, il gatto sedeva\n")


@pytest.fixture
def timeline() -> ParityTimeline:
    return train(ParitySettings(merges=25, hybrid=3, special_tokens=("<|end|>",)), texts=[TEXT])


def test_round_trip(timeline, tmp_path):
    save_model(timeline, tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    assert isinstance(back, ParityTimeline)
    assert back.steps == timeline.steps and back.settings == timeline.settings
    assert (back.documents, back.initial, back.reference) == (("Alpha", "Beta", "Gamma"), timeline.initial, 0)
    assert [s.served for s in back.steps[:4]] == [-1, -1, -1, timeline.steps[3].served]
    assert back.parity_at(25) == timeline.parity_at(25)
    text = "the cat and der Kater<|end|>"
    assert back.tokenizer().encode(text, allowed_special="all").ids == timeline.tokenizer().encode(
        text, allowed_special="all").ids


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["parity"].pop("served"), "missing or malformed"),
    (lambda d: d["parity"]["served"].__setitem__(0, 7), "served an unknown document"),
    (lambda d: d["parity"]["saved"].__setitem__(0, [[9, 1]]), "malformed savings"),
    (lambda d: d.__setitem__("version", 99), "newer than this tokviz reads"),
    (lambda d: d["settings"].__setitem__("hybrid", -2), "cannot be negative"),
])
def test_damaged_files_are_refused(timeline, damage, message):
    d = json.loads(json.dumps(to_json(timeline)))
    damage(d)
    with pytest.raises(ModelFormatError, match=message):
        from_json(d)
