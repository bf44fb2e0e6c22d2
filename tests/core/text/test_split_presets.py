"""Pre-tokenization: the presets are tiktoken's patterns and split text exactly as tiktoken does."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import (
    GPT2_SPLIT_PATTERN,
    GPT4_SPLIT_PATTERN,
    O200K_SPLIT_PATTERN,
    SPLIT_PRESETS,
    SplitError,
    parse_split,
)
from tokviz.core.bpe.reference import TIKTOKEN_PATTERNS
from tokviz.core.text.split import split_specials

HYPOTHESIS = settings(max_examples=150, deadline=None, database=None)
SPACES = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
# Characters that exercise every branch of the patterns: letters of several scripts, marks,
# digits, apostrophes, every kind of white space (including ones str.isspace() knows and
# \s may not), CR/LF, symbols, emoji.
TRICKY = "aZé'sStT1234 .,!?/-\u0301漢字Ωй😀\t\r\n" + SPACES


@pytest.fixture(scope="module")
def tiktoken_patterns():
    """The pat_str of tiktoken's own encodings, read without downloading any vocabulary."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    mp = pytest.MonkeyPatch()
    mp.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    mp.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
    try:
        return {
            "gpt2": openai_public.gpt2()["pat_str"],
            "r50k": openai_public.r50k_base()["pat_str"],
            "gpt4": openai_public.cl100k_base()["pat_str"],
            "o200k": openai_public.o200k_base()["pat_str"],
        }
    finally:
        mp.undo()


def test_preset_patterns_are_tiktokens_verbatim(tiktoken_patterns):
    assert GPT2_SPLIT_PATTERN == tiktoken_patterns["gpt2"] == tiktoken_patterns["r50k"]
    assert GPT4_SPLIT_PATTERN == tiktoken_patterns["gpt4"]
    assert O200K_SPLIT_PATTERN == tiktoken_patterns["o200k"]
    assert SPLIT_PRESETS["gpt2"] == GPT2_SPLIT_PATTERN
    assert SPLIT_PRESETS["gpt4"] == GPT4_SPLIT_PATTERN
    assert SPLIT_PRESETS["o200k"] == O200K_SPLIT_PATTERN
    assert SPLIT_PRESETS["none"] is None


def tiktoken_pieces(texts: list[str], preset: str, chunks_of) -> list[list[bytes]]:
    """How tiktoken's Rust regex splits each text.

    Trick: a vocabulary holding every single byte plus every chunk tokviz produced. tiktoken
    encodes a regex piece found in the vocabulary as one token, so when both split the same way
    each token is exactly one tokviz chunk.
    """
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([i]): i for i in range(256)}
    for text in texts:
        for c in chunks_of(text):
            ranks.setdefault(c.encode("utf-8"), len(ranks))
    enc = tiktoken.Encoding(
        f"probe-{preset}", pat_str=TIKTOKEN_PATTERNS[preset], mergeable_ranks=ranks, special_tokens={}
    )
    return [enc.decode_tokens_bytes(enc.encode_ordinary(t)) for t in texts]


@pytest.mark.parametrize("preset", ["gpt2", "gpt4", "o200k"])
def test_presets_split_like_tiktoken_on_tricky_text(preset):
    rng = random.Random(f"split-{preset}")
    texts = ["".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 40))) for _ in range(1500)]
    texts += ["hello world  \n\n", "I'm   OK\r\n", "   ", "x\n", "don'T 12345 ٣٤٥", "a \u3000b \u2028"]
    splitter = parse_split(preset)
    expected = tiktoken_pieces(texts, preset, splitter.chunks)
    for text, pieces in zip(texts, expected):
        assert [c.encode("utf-8") for c in splitter.chunks(text)] == pieces, repr(text)


@pytest.mark.parametrize("preset", ["gpt2", "gpt4", "o200k"])
@pytest.mark.parametrize("corpus", ["udhr2_all.txt", "tinyshakespeare.txt"])
def test_presets_split_like_tiktoken_on_real_text(corpus_text, preset, corpus):
    text = corpus_text(corpus, 120_000)
    splitter = parse_split(preset)
    (pieces,) = tiktoken_pieces([text], preset, splitter.chunks)
    assert [c.encode("utf-8") for c in splitter.chunks(text)] == pieces


@given(st.text(alphabet=TRICKY, max_size=60))
@HYPOTHESIS
def test_whitespace_is_exactly_str_split(text):
    splitter = parse_split("whitespace")
    assert splitter.chunks(text) == text.split()
    assert [text[a:b] for a, b in splitter.spans(text)] == text.split()
    assert not splitter.lossless


@given(st.text(alphabet=TRICKY, max_size=60), st.sampled_from(["gpt2", "gpt4", "o200k", "none"]))
@HYPOTHESIS
def test_lossless_presets_cover_the_text(text, preset):
    splitter = parse_split(preset)
    spans = splitter.spans(text)
    assert splitter.lossless
    assert "".join(splitter.chunks(text)) == text
    assert [text[a:b] for a, b in spans] == splitter.chunks(text)
    assert all(b > a for a, b in spans)
    starts, ends = [a for a, _ in spans], [b for _, b in spans]
    assert starts == [0, *ends[:-1]][: len(starts)]
    assert ends[-1:] == ([len(text)] if text else [])


def test_none_is_one_chunk():
    splitter = parse_split("none")
    assert splitter.chunks("a b\nc") == ["a b\nc"]
    assert splitter.spans("a b\nc") == [(0, 5)]
    assert splitter.chunks("") == []
    assert splitter.spans("") == []


def test_gpt4_known_chunks():
    assert parse_split("gpt4").chunks("Hello world's 12345!!\n\n  x") == [
        "Hello", " world", "'s", " ", "123", "45", "!!\n\n", " ", " x",
    ]
    # `$` means end of text (Rust), not "before a final newline" (Python)
    assert parse_split("gpt2").chunks("hi  \n") == ["hi", "  \n"]


def test_custom_regex_split():
    splitter = parse_split(r"regex:\w+|[^\w\s]")
    assert splitter.spec == r"regex:\w+|[^\w\s]"
    assert splitter.chunks("hi, you!") == ["hi", ",", "you", "!"]
    assert splitter.spans("hi, you!") == [(0, 2), (2, 3), (4, 7), (7, 8)]
    assert not splitter.lossless
    # empty matches are not chunks
    assert parse_split("regex:a*").chunks("baac") == ["aa"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("regex:(", r"^invalid split regex '\(': missing \)"),
        ("regex:[a-", r"^invalid split regex '\[a-'"),
        ("regex:", r"^empty split regex"),
        ("regex:(a)|b", r"capturing groups; use \(\?:\.\.\.\) instead"),
        ("gpt5", r"^unknown split 'gpt5'; choose one of none\|whitespace\|gpt2\|gpt4\|o200k\|regex:PATTERN$"),
        ("", r"^unknown split ''"),
    ],
)
def test_bad_split_specs(spec, message):
    with pytest.raises(SplitError, match=message):
        parse_split(spec)


def test_split_specials_longest_first():
    assert split_specials("a<s>b", ["<s>"]) == [(0, 1, False), (1, 4, True), (4, 5, False)]
    assert split_specials("<s><ss>", ["<s", "<ss>", "<s>"]) == [(0, 3, True), (3, 7, True)]
    assert split_specials("", ["<s>"]) == []
    assert split_specials("abc", []) == [(0, 3, False)]


def test_whitespace_table_covers_every_space_character():
    """The whitespace split scans code points below SPACE_SCAN_LIMIT only; nothing above is a
    space, so it still equals str.split() on all of Unicode."""
    import sys

    from tokviz.core.text.split import SPACE_SCAN_LIMIT

    assert not any(chr(c).isspace() for c in range(SPACE_SCAN_LIMIT, sys.maxunicode + 1))
    assert chr(SPACE_SCAN_LIMIT - 1).isspace()  # U+3000, the last one
