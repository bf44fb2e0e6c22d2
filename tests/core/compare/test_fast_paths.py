"""The quick ways compare finds what it counts give what the plain ways give: token overlaps from
running counts of token starts, identifiers from their marks, and tokens placed by their lengths
alone (never for a text with a lone surrogate)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.compare import model_facts, text_facts
from tokviz.core.compare.code_metrics import IDENTIFIER, IDENTIFIER_PATTERN
from tokviz.core.compare.text import Overlaps, token_counts_per_word
from tokviz.core.compare.tokens import encode_positions
from tokviz.core.explain.loaded_timeline import as_timeline


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(-3, 0), st.data())
def test_running_counts_of_token_starts_equal_the_binary_searches(lengths, first, data):
    """Tokens one after another from `first` (zero-length ones among them: the searches answer),
    spans that start inside them and are not empty (else the searches answer too)."""
    ends = first + np.cumsum(lengths)
    starts = ends - np.array(lengths)
    n = int(ends[-1])
    k = data.draw(st.integers(1, 12))
    if n <= first:
        lo = hi = np.zeros(0, dtype=np.int64)
    else:
        lo = np.array(data.draw(st.lists(st.integers(first, n - 1), min_size=k, max_size=k)), dtype=np.int64)
        hi = np.minimum(lo + np.array(data.draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))), n)
    assert Overlaps(starts, ends)(lo, hi).tolist() == token_counts_per_word(starts, ends, lo, hi).tolist()


def test_tokens_spelling_the_text_are_placed_by_their_lengths_and_a_lone_surrogate_is_not():
    facts = text_facts("ab é 😀 ab")
    positions = encode_positions(model_facts(byte_level()), facts)
    assert positions.in_bytes and positions.ends[-1] == len(facts.data)
    assert not encode_positions(model_facts(byte_level()), text_facts("ab \ud800 ab")).in_bytes  # U+FFFD is not it


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="_aAzZ09é \n.-", max_size=40))
def test_identifiers_found_from_their_marks_are_the_patterns_matches(text):
    assert [m.span() for m in IDENTIFIER.finditer(text)] == [m.span() for m in IDENTIFIER_PATTERN.finditer(text)]


def byte_level():
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" a": 257}
    return as_timeline(RankBpeTokenizer(ranks, pattern=r" ?\w+| ?[^\w\s]+|\s+"))
