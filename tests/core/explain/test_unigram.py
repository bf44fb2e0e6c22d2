"""Explaining loaded Unigram and WordLevel models: segmentations with probabilities, sampling,
pieces no input can produce (glitch tokens), scores in the vocabulary, unknown words."""

from __future__ import annotations

import json
import math
import random

import pytest

from tests.core.formats.sentencepiece.spm_helpers import write_model
from tokviz.core.explain.tokens import find_unreachable
from tokviz.core.explain.unigram import UnigramExplainer, piece_scores, unreachable_pieces, word_level_oov
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.loading import load_tokenizer

BASE = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control")]


@pytest.fixture
def tiny_sp(tmp_path):
    """▁un believ able (and the letters), a piece "ab" whose own text always splits, "ﬁ"."""
    pieces = BASE + [(c, -6.0, "normal") for c in "▁unbeliva"] + [
        ("▁un", -2.0, "normal"), ("believ", -3.0, "normal"), ("able", -2.5, "normal"),
        ("▁unbeliev", -6.0, "normal"), ("ab", -30.0, "normal"), ("ﬁ", -1.0, "normal")]
    return write_model(tmp_path / "tiny.model", pieces, trainer={"model_type": 1},
                       normalizer={"name": "identity"})


def test_segmentations_of_a_sentencepiece_model(sp_model):
    tok = load_tokenizer(sp_model("unigram-nmt"))
    ex = UnigramExplainer(tok)
    nb = ex.nbest("Declaration", 5)
    assert len(nb) == 5 and [s.prob for s in nb] == sorted((s.prob for s in nb), reverse=True)
    assert nb[0].ids == tuple(tok.encode_ids("Declaration"))
    assert 0 < sum(s.prob for s in nb) <= 1 + 1e-9
    e = ex.explain("Declaration")
    assert e.word == "▁Declaration" and e.n_segmentations > 5 and e.best == nb[0]
    assert math.isclose(sum(math.exp(s.log_prob - e.log_z) for s in nb), sum(s.prob for s in nb))
    rng = random.Random(5)
    flat = {ex.sample("Declaration", alpha=0.1, rng=rng).pieces for _ in range(40)}
    sharp = {ex.sample("Declaration", alpha=5.0, rng=rng).pieces for _ in range(40)}
    assert len(flat) > len(sharp) >= 1  # small alpha spreads the samples


def test_segmentations_of_a_tokenizer_json_unigram():
    d = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0], ["▁", -2.0], ["a", -2.0],
                                                             ["b", -3.0], ["ab", -2.5]]},
         "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}}
    tok = HfTokenizer.from_json(d)
    ex = UnigramExplainer(tok)
    nb = ex.nbest("ab", 10)
    assert {s.pieces for s in nb} == {("▁a", "b"), ("▁", "ab"), ("▁", "a", "b")}
    assert nb[0].pieces == ("▁a", "b") and list(nb[0].ids) == tok.encode_ids("ab")  # -4 beats -4.5
    assert piece_scores(tok)[5] == -2.5


def test_unreachable_pieces_and_the_glitch_finder(tiny_sp):
    tok = load_tokenizer(tiny_sp)
    found = dict(unreachable_pieces(tok))
    ab, fi = tok.piece_to_id("ab"), tok.piece_to_id("ﬁ")
    assert found.get(ab) == "viterbi"  # "a" + "b" always beats it
    assert tok.piece_to_id("▁un") not in found
    glitches = {g.id: g.reason for g in find_unreachable(tok)}
    assert glitches.get(ab) == "viterbi" and 1 not in glitches  # control pieces are not glitches
    assert fi not in glitches  # identity normalization keeps it


def test_word_level_unknown_words():
    d = {"model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "the": 1, "cat": 2}, "unk_token": "[UNK]"},
         "pre_tokenizer": {"type": "WhitespaceSplit"}, "normalizer": {"type": "Lowercase"}}
    tok = HfTokenizer.from_json(json.loads(json.dumps(d)))
    report = word_level_oov(tok, "The cat sat on the mat, the cat")
    assert (report.words, report.unknown) == (8, 3) and report.top[0] == ("sat", 1)  # sat, on, "mat,"
    assert math.isclose(report.rate, 3 / 8)
    enc = tok.encode("the dog")
    assert enc.ids == [1, 0] and enc.unknown == [1]
