"""Explaining asks the tokenizer, never its class: every tokenizer declares the capabilities of the
`Tokenizer` protocol (``takes_processes``, ``one_off_paths``, ``unreachable``, ``lattice_view``,
``merge_list`` where it has merges), and the explain and ids-path helpers work on any object that
declares them (a wrapper around a tokenizer too)."""

from __future__ import annotations

import json

import pytest

from tokviz.core import TrainSettings, train
from tokviz.core.algorithm.ids_path import encode_ids_like, encode_once, processes_kw, write_json_once
from tokviz.core.algorithm.protocol import Tokenizer
from tokviz.core.baselines import CharTokenizer
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.explain.tokens import find_unreachable, merge_list
from tokviz.core.explain.unigram import UnigramExplainer, is_unigram, piece_scores
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

WORDPIECE = {"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "un": 1, "##able": 2, "a": 3, "b": 4, "a.b": 5},
                       "unk_token": "[UNK]", "continuing_subword_prefix": "##"},
             "pre_tokenizer": {"type": "BertPreTokenizer"}}
UNIGRAM = {"model": {"type": "Unigram", "unk_id": 0,
                     "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -1.0], ["ab", -5.0], ["abc", -1.5], ["c", -1.0]]},
           "added_tokens": [{"id": 6, "content": "<extra>", "special": False}]}


def _hf(d: dict) -> HfTokenizer:
    return HfTokenizer.from_json(json.loads(json.dumps(d)))


@pytest.fixture(scope="module")
def trained():
    return train(TrainSettings(vocab_size=270), texts=["aaabdaaabac " * 20]).tokenizer()


def test_every_tokenizer_fills_in_the_protocol(trained):
    toks = [trained, CharTokenizer.from_texts(["abc"]), _hf(WORDPIECE), _hf(UNIGRAM),
            RankBpeTokenizer({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern=r"\w+| ?\W")]
    for tok in toks:
        assert isinstance(tok, Tokenizer), type(tok).__name__
    assert [t.takes_processes for t in toks] == [False, False, False, False, True]
    assert [t.one_off_paths for t in toks] == [False, False, False, False, True]
    assert [is_unigram(t) for t in toks] == [False, False, False, True, False]


def test_a_trained_bpe_lists_its_merges(trained):
    merges = merge_list(trained)
    assert [m.pair for m in merges] == [tuple(p) for p in trained.merges]
    assert [m.id for m in merges] == list(range(256, 256 + len(trained.merges)))
    assert all(m.token == trained.token_bytes(m.pair[0]) + trained.token_bytes(m.pair[1]) for m in merges)


def test_wordpiece_glitches_are_the_models_verdict():
    tok = _hf(WORDPIECE)
    assert tok.unreachable(2) is None  # "##able" only continues a word
    assert tok.unreachable(1) is None
    assert tok.unreachable(5) == ("split", (3, 0, 4))  # BERT's pre-tokenizer cuts "a.b" at the dot... into a [UNK] b
    assert {g.id: g.reason for g in find_unreachable(tok)} == {5: "split"}


def test_a_unigram_models_lattice_view():
    tok = _hf(UNIGRAM)
    view = tok.lattice_view()
    assert view.unk_id == 0 and list(view.scores) == [0.0, -1.0, -1.0, -1.0 * 5, -1.5, -1.0]
    assert piece_scores(tok) == [0.0, -1.0, -1.0, -5.0, -1.5, -1.0, 0.0]  # the added token scores 0
    assert tok.unreachable(3) == ("viterbi", (1, 2))  # "a" + "b" beats "ab"
    assert {g.id: g.reason for g in find_unreachable(tok)} == {3: "viterbi"}
    assert UnigramExplainer(tok).nbest("abc", 1)[0].ids == (4,)
    assert _hf(WORDPIECE).lattice_view() is None


class Wrapped:
    """A tokenizer seen through a wrapper: the helpers may only ask its declared capabilities."""

    def __init__(self, tok) -> None:
        self._tok = tok
        self.calls: list[dict] = []

    def __getattr__(self, name):
        return getattr(self._tok, name)

    def encode(self, text, **kw):
        self.calls.append(kw)
        return self._tok.encode(text, **kw)


def test_the_ids_path_asks_capabilities_not_classes():
    rank = RankBpeTokenizer({bytes([b]): b for b in range(256)} | {b"ab": 256}, pattern=r"\w+| ?\W")
    tok = Wrapped(rank)
    assert processes_kw(tok, 2) == {"processes": 2} and processes_kw(tok, 1) == {}
    assert encode_ids_like(tok, "abc ab", processes=2) == rank.encode("abc ab").ids == [256, 99, 32, 256]
    assert encode_once(tok, "abc ab").ids == [256, 99, 32, 256]
    assert tok.calls[-1]["share_cache"] is False  # a one-off encode keeps no cache warm
    assert not write_json_once(tok, "abc ab", [].append)  # a short text: no faster path
    hf = Wrapped(_hf(WORDPIECE))
    assert processes_kw(hf, 2) == {}
    assert encode_ids_like(hf, "unable b", processes=2) == [1, 2, 4] and "share_cache" not in hf.calls[-1]
