"""The lattice view's layout: the best path on row 0 tiles the word and is the encoder's
segmentation, no two bars of a row overlap, every n-best path is found among the drawn edges."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.unigram import lattice_layout
from tokviz.core.unigram.lattice_layout import layout_lattice, word_at
from tokviz.core.unigram.timeline import UnigramSettings, train_unigram

CORPUS = ("the unbelievable story of unbelievable believers who believe the story; "
          "a believable tale, unbelievably told, and told again by tellers of tales. ") * 30


@pytest.fixture(scope="module")
def tok():
    return train_unigram(UnigramSettings(vocab_size=120, seed_min_count=1), texts=[CORPUS]).tokenizer()


def _apart(a, b) -> bool:
    """Edges `a` and `b` share no point of a row (an empty edge is drawn half a character wide)."""
    return max(a.end, a.start + 0.5) <= b.start or max(b.end, b.start + 0.5) <= a.start


def test_doctests():
    assert doctest.testmod(lattice_layout).failed == 0


@settings(max_examples=60, deadline=None)
@given(word=st.text(st.sampled_from("abdefilnorstuvwy"), min_size=1, max_size=14))
def test_layout_of_any_word(tok, word):
    ex = tok.explain(word, n=4)
    lay = layout_lattice(ex)
    best = lay.best_path
    assert [e.id for e in best] == tok.encode(word).ids
    assert all(e.level == 0 for e in best) and all(e.level > 0 for e in lay.edges if not e.on_best)
    positive = [e for e in best if e.end > e.start]
    assert [e.start for e in positive][1:] == [e.end for e in positive][:-1] and positive[-1].end == len(word)
    for lvl in range(1, lay.n_levels):
        row = [e for e in lay.edges if e.level == lvl]
        assert all(_apart(a, b) for i, a in enumerate(row) for b in row[i + 1:])
    assert len(lay.edges) + lay.hidden == len(ex.edges)
    for seg in ex.nbest:
        assert [lay.edges[k].piece for k in lay.path_edges(seg)] == list(seg.pieces)
    assert lay.best_log_prob == ex.best.log_prob


def test_a_cap_on_drawn_edges_keeps_the_best_path(tok):
    ex = tok.explain("unbelievably", n=1)
    lay = layout_lattice(ex, max_edges=3)
    assert lay.best_pieces == ex.best.pieces
    assert lay.hidden == len(ex.edges) - len(lay.edges) > 0


@pytest.mark.parametrize("text,a,b,word", [("the unbelievable story", 3, 7, "unbelievable"),
                                           ("x", 0, 1, "x"), ("a  b", 1, 2, ""), ("", 0, 0, "")])
def test_word_at(text, a, b, word):
    assert word_at(text, a, b) == word
