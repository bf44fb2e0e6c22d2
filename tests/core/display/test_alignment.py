"""Which tokens differ between two tokenizations: cut points after whitespace, against a slow
obvious implementation (hypothesis) and known answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.display.alignment import canonical_positions, differing_cuts


def slow_differing(text, spans, reference):
    """The module doc, word for word: positions moved past whitespace (within what both rows cover)."""
    if not spans:
        return []
    end = max(b for _, b in spans)
    ref = [(a, b) for a, b in reference if a <= end]
    if not ref:
        return [False] * len(spans)
    limit = min(len(text), max(end, max(b for _, b in ref)))

    def canon(p):
        p = min(p, limit)
        while p < limit and text[p].isspace():
            p += 1
        return p

    cuts = {canon(p) for a, b in ref for p in (a, b)}
    covered = max(b for _, b in ref)
    out = []
    for a, b in spans:
        ca, cb = canon(a), canon(b)
        judged = ca < cb and b <= covered
        out.append(judged and (ca not in cuts or cb not in cuts or any(ca < c < cb for c in cuts)))
    return out


def partition(draw, n):
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=n))) if n > 1 else []
    points = [0, *[c for c in cuts if 0 < c < n], n]
    return [(a, b) for a, b in zip(points, points[1:]) if a < b]


@st.composite
def texts_and_rows(draw):
    text = draw(st.text(alphabet="ab \n\t", min_size=1, max_size=40))
    return text, partition(draw, len(text)), partition(draw, len(text))


@settings(max_examples=300, deadline=None)
@given(texts_and_rows())
def test_matches_a_slow_obvious_implementation(case):
    text, row, ref = case
    assert differing_cuts(text, row, ref) == slow_differing(text, row, ref)


@settings(max_examples=100, deadline=None)
@given(texts_and_rows())
def test_a_tokenization_never_differs_from_itself(case):
    text, row, _ = case
    assert not any(differing_cuts(text, row, row))


def test_known_answers():
    text = "Hello world, hello"
    gpt2 = [(0, 5), (5, 11), (11, 12), (12, 18)]  # Hello|␣world|,|␣hello
    bert = [(0, 5), (6, 11), (11, 12), (13, 18)]  # hello|world|,|hello: spaces dropped
    assert differing_cuts(text, bert, gpt2) == [False, False, False, False]
    split = [(0, 3), (3, 5), (5, 11), (11, 12), (12, 18)]  # Hel|lo|...
    assert differing_cuts(text, split, gpt2) == [True, True, False, False, False]
    assert differing_cuts(text, gpt2, split) == [True, False, False, False]
    assert canonical_positions("a \n b").tolist() == [0, 4, 4, 4, 4, 5]
    assert differing_cuts("abc", [], [(0, 3)]) == []
