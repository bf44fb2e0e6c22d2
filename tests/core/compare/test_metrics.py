"""Compare metrics: known answers on tiny texts worked out by hand, zero denominators, properties."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import TrainSettings, train
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import METRIC_KEYS, ModelSpec, compare, model_facts, renyi_efficiency, text_facts
from tokviz.core.compare.metrics import space_codes, token_counts_per_word
from tokviz.core.explain.loaded_timeline import as_timeline


def char_model(merges: int, corpus: str = "ab ab"):
    """Characters as units, words split on whitespace (spaces dropped), `merges` merges."""
    return train(TrainSettings(units="chars", split="whitespace", merges=merges, min_count=1), texts=[corpus])


def byte_model():
    """Byte-level BPE with one merge ("ab") keeping the spaces: encodes any text losslessly."""
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    return as_timeline(RankBpeTokenizer(ranks, pattern=r"\S+|\s+"))


def measure(timeline, text: str, step: int | None = None):
    result = compare(text, [ModelSpec("m", lambda: timeline, step)]).results[0]
    assert result.error is None
    return result.metrics


def renyi_by_hand(probabilities: list[float], vocab_size: int) -> float:
    h = math.log(sum(p**2.5 for p in probabilities)) / (1 - 2.5)
    return h / math.log(vocab_size)


# -- known answers ---------------------------------------------------------------------------


def test_characters_of_ab_ab():
    """Vocabulary a, b, [UNK] (3 ids); "ab ab" -> a b a b; both words split in two."""
    m = measure(char_model(0), "ab ab")
    assert (m.tokens, m.chars, m.bytes, m.words) == (4, 5, 5, 2)
    assert (m.chars_per_token, m.bytes_per_token, m.fertility, m.continued_words) == (1.25, 1.25, 2.0, 1.0)
    assert m.vocab_used == pytest.approx(2 / 3)
    assert m.renyi_efficiency == pytest.approx(math.log(2) / math.log(3))  # uniform over 2 of 3
    assert (m.unk_rate, m.byte_fallback_rate) == (0.0, None)


def test_one_merge_makes_whole_words():
    """With the merge a+b: "ab ab" -> ab ab; one token type only: Rényi efficiency 0."""
    m = measure(char_model(1), "ab ab")
    assert (m.tokens, m.fertility, m.continued_words, m.vocab_used, m.renyi_efficiency) == (2, 1.0, 0.0, 0.25, 0.0)


def test_unknown_characters():
    """ "abc ab" at step 0: a b [UNK] a b; at step 1: ab [UNK] ab (c is not in the vocabulary)."""
    tl = char_model(1)
    m0 = measure(tl, "abc ab", step=0)
    assert (m0.tokens, m0.unk_rate, m0.vocab_used, m0.continued_words) == (5, 0.2, 1.0, 1.0)
    assert m0.renyi_efficiency == pytest.approx(renyi_by_hand([0.4, 0.4, 0.2], 3))
    m1 = measure(tl, "abc ab")
    assert (m1.tokens, m1.unk_rate, m1.vocab_used, m1.continued_words, m1.fertility) == (3, 1 / 3, 0.5, 0.5, 1.5)
    assert m1.renyi_efficiency == pytest.approx(renyi_by_hand([2 / 3, 1 / 3], 4))


def test_byte_level_counts_spaces_and_multibyte_characters():
    """ "ab é" -> ab, ' ', 0xC3, 0xA9: 4 tokens, 4 chars, 5 bytes; "é" is one word in two tokens."""
    m = measure(byte_model(), "ab é")
    assert (m.tokens, m.chars, m.bytes, m.words) == (4, 4, 5, 2)
    assert (m.bytes_per_token, m.fertility, m.continued_words) == (1.25, 2.0, 0.5)
    assert m.vocab_used == pytest.approx(4 / 257)


def test_vocabulary_size_follows_the_step():
    tl = char_model(1)
    assert [model_facts(tl, k).vocab_size for k in (0, 1)] == [3, 4]
    assert model_facts(byte_model(), 0).vocab_size == 256


def test_empty_text_has_no_ratios():
    m = measure(byte_model(), "")
    assert (m.tokens, m.chars, m.bytes, m.words, m.vocab_used) == (0, 0, 0, 0, 0.0)
    ratios = [k for k in METRIC_KEYS if k not in ("tokens", "chars", "bytes", "words", "vocab_used")]
    assert {k: getattr(m, k) for k in ratios} == dict.fromkeys(ratios)


def test_spaces_only_has_tokens_but_no_words():
    m = measure(byte_model(), "  \n")
    assert (m.tokens, m.words, m.fertility, m.continued_words, m.chars_per_token) == (3, 0, None, None, 1.0)


def test_metric_keys_are_the_records_fields_in_order():
    assert tuple(measure(byte_model(), "ab").as_dict()) == METRIC_KEYS


def test_renyi_efficiency_known_values():
    assert renyi_efficiency(np.array([1, 1]), 2) == 1.0
    assert renyi_efficiency(np.array([1, 1]), 4) == pytest.approx(0.5)
    assert renyi_efficiency(np.array([9, 3, 1]), 10) == pytest.approx(renyi_by_hand([9 / 13, 3 / 13, 1 / 13], 10))
    assert renyi_efficiency(np.array([], dtype=np.int64), 10) is None
    assert renyi_efficiency(np.array([4]), 1) is None


def test_a_model_that_fails_to_open_does_not_stop_the_others():
    from tokviz.core.errors import ModelFormatError

    def broken():
        raise ModelFormatError("bad.json: not a model")

    results = compare("ab", [ModelSpec("bad", broken), ModelSpec("good", byte_model)]).results
    assert [(r.model, r.error) for r in results] == [("bad", "bad.json: not a model"), ("good", None)]
    assert results[1].metrics.tokens == 1


def test_a_step_past_the_end_is_an_error_of_that_model():
    result = compare("ab", [ModelSpec("m", lambda: char_model(1), 5)]).results[0]
    assert result.metrics is None and "step 5 is past the last merge (1)" in result.error


# -- properties ------------------------------------------------------------------------------

TEXTS = st.text(st.sampled_from("ab é\t\n\u3000\xa0\x1c字👋c"), max_size=40)


def test_space_codes_are_every_space_of_str_split():
    assert [c for c in range(0x110000) if chr(c).isspace()] == space_codes().tolist()


@given(TEXTS)
def test_words_are_those_of_str_split(text):
    f = text_facts(text)
    assert [text[a:b] for a, b in zip(f.word_starts.tolist(), f.word_ends.tolist())] == text.split()
    assert f.n_bytes() == len(text.encode("utf-8"))


@settings(max_examples=60, deadline=None)
@given(TEXTS)
def test_text_counts_do_not_depend_on_the_tokenizer(text):
    a, b = measure(byte_model(), text), measure(char_model(1), text)
    expected = (len(text), len(text.encode("utf-8")), len(text.split()))
    assert (a.chars, a.bytes, a.words) == (b.chars, b.bytes, b.words) == expected


@settings(max_examples=60, deadline=None)
@given(TEXTS)
def test_whitespace_split_tokenizers_give_every_word_a_token(text):
    m = measure(char_model(1), text)
    assert m.tokens >= m.words
    for key in ("continued_words", "vocab_used", "renyi_efficiency", "unk_rate"):
        value = getattr(m, key)
        assert value is None or 0.0 <= value <= 1.0


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4)), max_size=12),
       st.lists(st.tuples(st.integers(0, 30), st.integers(1, 4)), max_size=6))
def test_tokens_per_word_equals_a_slow_count(tokens, words):
    ts = np.array([a for a, _ in tokens], dtype=np.int64)
    te = np.array([a + n for a, n in tokens], dtype=np.int64)
    ws = np.array([a for a, _ in words], dtype=np.int64)
    we = np.array([a + n for a, n in words], dtype=np.int64)
    slow = [sum(1 for s, e in zip(ts, te) if s < b and e > a) for a, b in zip(ws, we)]
    assert token_counts_per_word(ts, te, ws, we).tolist() == slow


def test_continued_words_match_a_slow_count_on_lossy_and_lossless_models():
    text = "abab  abc ba\tcab é ab"
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    for tl in (byte_model(), char_model(2, "abab abc ab")):
        enc = tl.tokenizer().encode_ordinary(text)
        slow = sum(1 for a, b in words if sum(1 for s, e in enc.spans if s < b and e > a) >= 2)
        assert measure(tl, text).continued_words == slow / len(words)
