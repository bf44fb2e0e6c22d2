"""`greedy`: the one greedy longest-match-first encoder (trained and Hugging Face WordPiece) equals
trying every candidate from the word's end, with BERT's rules (one unknown for the whole word)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.wordpiece.greedy import GreedyMatcher

HYPOTHESIS = settings(max_examples=300, deadline=None, database=None)
pieces = st.dictionaries(st.text("abc", min_size=1, max_size=4), st.integers(0, 50), max_size=12)


def naive(word, first, rest, max_chars):
    """Longest first from the end of the word at every position; None for one unknown token."""
    if len(word) > max_chars:
        return None
    ids, spans, start = [], [], 0
    while start < len(word):
        table = first if start == 0 else rest
        for end in range(len(word), start, -1):
            if word[start:end] in table:
                ids.append(table[word[start:end]])
                spans.append((start, end))
                break
        else:
            return None
        start = end
    return ids, spans


@HYPOTHESIS
@given(pieces, pieces, st.text("abcd", max_size=12), st.integers(0, 12))
def test_greedy_equals_trying_every_candidate(first, rest, word, max_chars):
    assert GreedyMatcher(first, rest).segment(word, max_chars=max_chars) == naive(word, first, rest, max_chars)


@HYPOTHESIS
@given(pieces, pieces, st.text("abcd", max_size=12))
def test_no_longer_candidate_is_a_piece(first, rest, word):
    """What explanations rely on: at each match, no longer candidate up to the longest piece is in
    its table; where matching stops, no candidate at all."""
    m = GreedyMatcher(first, rest)
    ids, spans = m.match(word)
    assert m.longest == max(map(len, [*first, *rest]), default=0)
    stop = spans[-1][1] if spans else 0
    for t, (start, found) in [*zip(ids, spans), (None, (stop, None))]:
        if start == len(word):
            break
        table = first if start == 0 else rest
        top = min(len(word), start + m.longest)
        assert not any(word[start:b] in table for b in range(top, found or start, -1))
        if found is not None:
            assert table[word[start:found]] == t


def test_bert_rules():
    m = GreedyMatcher({"un": 1, "unbe": 2, "believe": 3}, {"believ": 4, "able": 5, "lie": 6, "v": 7})
    assert m.segment("unbelievable", max_chars=100) == ([2, 6, 7, 5], [(0, 4), (4, 7), (7, 8), (8, 12)])
    assert m.segment("unbelievably", max_chars=100) is None  # nothing continues at "y"
    assert m.segment("unbelievable", max_chars=11) is None  # too long
    assert m.segment("", max_chars=0) == ([], [])
