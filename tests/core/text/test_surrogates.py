"""Surrogate code points in text to encode: tiktoken's rule (join valid pairs, replace lone ones
with U+FFFD) for every tokenizer family, with spans that still index the caller's text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import HF_NAMES, TIKTOKEN_NAMES, load_ours, load_reference
from tokviz.core import CharTokenizer, TrainSettings, WordTokenizer
from tokviz.core.registry import make_training
from tokviz.core.text.surrogates import fix_surrogates, has_surrogates
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

THUMBS = "\ud83d\udc4d"  # 👍 as a UTF-16 surrogate pair held in a Python str


def tiktoken_repair(text: str) -> str:
    """What tiktoken's ``encode`` does to a str holding surrogates (its own expression)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


surrogate_texts = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.characters(categories=["Cs"]),
        st.sampled_from([THUMBS, "\ud83d", "\udc4d", " ", "a", "é", "\u4e2d", "\n", "<|endoftext|>"]),
    ),
    max_size=24,
).map("".join)


def check_spans(text: str, enc) -> None:
    """Spans index `text` (the caller's), ordered, and each token's characters repair to the
    characters its span covers in the repaired text."""
    fixed, starts = fix_surrogates(text)
    starts = starts or list(range(len(text) + 1))
    for a, b in enc.spans:
        assert 0 <= a <= b <= len(text)
        assert a in starts and b in starts  # never inside a joined pair
    assert all(a in starts and b in starts for a, b in enc.dropped)


# -- the rule -----------------------------------------------------------------------------


@given(surrogate_texts)
def test_fix_surrogates_is_tiktokens_repair(text):
    fixed, starts = fix_surrogates(text)
    assert fixed == tiktoken_repair(text)
    assert (starts is None) == (not has_surrogates(text))
    if starts is not None:
        assert len(starts) == len(fixed) + 1 and starts[-1] == len(text)
        for i, c in enumerate(fixed):  # each character comes from the code points it stands for
            assert tiktoken_repair(text[starts[i]:starts[i + 1]]) == c


# -- tiktoken files: tiktoken defines the answer -----------------------------------------


def test_issue_cases_cl100k():
    tok = load_ours("cl100k_base")
    assert tok.encode(THUMBS).ids == [9468, 239, 235]  # the pair joined to 👍, as tiktoken
    assert tok.encode_ordinary(THUMBS).ids == tok.encode_ids(THUMBS) == [9468, 239, 235]
    assert tok.encode(THUMBS).spans == [(0, 2)] * 3  # partial tokens of one character: its span
    assert tok.encode("\ud83d").ids == tok.encode("\ufffd").ids


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=surrogate_texts)
def test_tiktoken_families_equal_tiktoken(name, text):
    tok, ref = load_ours(name), load_reference(name)
    assert tok.encode_ids(text) == ref.encode_ordinary(text)
    assert tok.encode_ordinary(text).ids == ref.encode_ordinary(text)
    enc = tok.encode(text, allowed_special="all")
    assert enc.ids == ref.encode(text, allowed_special="all")
    check_spans(text, enc)


# -- tokenizer.json: tokenizers defines the answer on the repaired text ------------------


def test_issue_case_bert_joins_the_pair_like_tiktoken():
    tok, ref = load_ours("bert-base-uncased"), load_reference("bert-base-uncased")
    assert tok.encode(THUMBS).ids == ref.encode("👍").ids
    assert tok.encode("a\ud83db").ids == ref.encode("a\ufffdb").ids


@pytest.mark.parametrize("name", HF_NAMES)
@settings(max_examples=60, deadline=None)
@given(text=surrogate_texts)
def test_tokenizer_json_families_equal_tokenizers_on_the_repaired_text(name, text):
    tok, ref = load_ours(name), load_reference(name)
    expected = ref.encode(tiktoken_repair(text))
    enc = tok.encode(text)
    assert enc.ids == expected.ids
    assert tok.encode_ids(text, add_special_tokens=True) == expected.ids
    assert tok.encode_ordinary(text).ids == tok.encode_ordinary(tiktoken_repair(text)).ids
    check_spans(text, enc)


# -- tokviz-trained models and the baselines: the same rule ------------------------------

CORPUS = "low lower lowest 👍x 👍 newer ol\u00e9 \u4e2d\u6587 " * 4


def _trained():
    yield "bpe-bytes", make_training(TrainSettings(merges=30), texts=[CORPUS]).run().tokenizer()
    yield "bpe-chars", make_training(TrainSettings(units="chars", merges=30), texts=[CORPUS]).run().tokenizer()
    yield "wordpiece", make_training(WordPieceSettings(merges=30), texts=[CORPUS]).run().tokenizer()
    yield "unigram", make_training(UnigramSettings(vocab_size=40), texts=[CORPUS]).run().tokenizer()
    yield "chars", CharTokenizer.from_texts([CORPUS])
    yield "words", WordTokenizer.from_texts([CORPUS])


TRAINED = dict(_trained())


@pytest.mark.parametrize("kind", sorted(TRAINED))
@settings(max_examples=60, deadline=None)
@given(text=surrogate_texts)
def test_trained_families_encode_the_repaired_text(kind, text):
    tok = TRAINED[kind]
    fixed, _ = fix_surrogates(text)
    enc, ref = tok.encode(text, allowed_special="all"), tok.encode(fixed, allowed_special="all")
    assert enc.ids == ref.ids and enc.tokens == ref.tokens
    assert tok.encode_ordinary(text).ids == tok.encode_ordinary(fixed).ids == tok.encode_ids(text)
    check_spans(text, enc)


@pytest.mark.parametrize("kind", sorted(TRAINED))
def test_trained_families_join_the_pair(kind):
    tok = TRAINED[kind]
    enc, ref = tok.encode_ordinary(f"x{THUMBS}y"), tok.encode_ordinary("x👍y")
    assert enc.ids == ref.ids
    moved = [0, 1, 3, 4]  # a position in "x👍y" -> the same position in "x\ud83d\udc4dy"
    assert enc.spans == [(moved[a], moved[b]) for a, b in ref.spans]
    assert enc.dropped == [(moved[a], moved[b]) for a, b in ref.dropped]


def test_unigram_sampling_follows_the_rule():
    tok = TRAINED["unigram"]
    text = f"low {THUMBS} \ud83d lower"
    enc = tok.encode_sampled(text, rng=7)
    assert enc.ids == tok.encode_sampled(fix_surrogates(text)[0], rng=7).ids
    check_spans(text, enc)
