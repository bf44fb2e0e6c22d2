"""A BPE model file written as text (`timeline_json_text`) is byte for byte what the json module
writes from `timeline_to_json`'s dict: on random trainings, on tinyshakespeare, with no merges,
and for a model loaded back."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import corpus
from tokviz.core import TrainSettings, load_timeline, save_timeline, train
from tokviz.core.bpe.model_file import timeline_json_text, timeline_to_json
from tokviz.core.io.json_stream import json_pieces
from tokviz.core.model_files import model_json_pieces


def json_module_bytes(timeline) -> bytes:
    return json.dumps(timeline_to_json(timeline), separators=(",", ":")).encode("ascii")


@settings(max_examples=40, deadline=None)
@given(text=st.text(st.sampled_from("abcab a\n.é猫😀"), max_size=300), units=st.sampled_from(["bytes", "chars"]),
       merges=st.integers(0, 80), split=st.sampled_from(["gpt4", "whitespace"]))
def test_the_text_is_the_json_modules_bytes(text, units, merges, split):
    timeline = train(TrainSettings(units=units, split=split, merges=merges, special_tokens=("<s>",)),
                     texts=["ab " + text])
    written = b"".join(timeline_json_text(timeline))
    assert written == json_module_bytes(timeline) == b"".join(json_pieces(timeline_to_json(timeline)))
    assert b"".join(model_json_pieces(timeline)) == written  # what saving writes (the registry's writer)


def test_a_real_training_and_its_loaded_copy(tmp_path):
    text = corpus("tinyshakespeare.txt", 300_000)
    timeline = train(TrainSettings(units="bytes", split="gpt4", vocab_size=2000), texts=[text])
    shared = sum(len(s.candidates) for s in timeline.steps) - len({id(c) for s in timeline.steps for c in s.candidates})
    assert shared > 1000  # runners-up shared by several steps, each written once
    path = tmp_path / "m.json"
    save_timeline(timeline, path)
    assert path.read_bytes() == json_module_bytes(timeline)
    loaded = load_timeline(path)  # (its candidates are not shared)
    assert b"".join(timeline_json_text(loaded)) == path.read_bytes()


def test_no_merges():
    timeline = train(TrainSettings(units="bytes", split="gpt4", merges=0), texts=["abc"])
    assert not timeline.steps
    assert b"".join(timeline_json_text(timeline)) == json_module_bytes(timeline)
