"""A Unigram timeline's rounds kept as arrays (`tokviz.core.unigram.rounds`): the same tuples, ids,
scores and model files as rounds made of tuples."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from tokviz.core.unigram.model_file import from_json, to_json
from tokviz.core.unigram.rounds import PieceTable, RoundColumns, UnigramRound, id_order, shared_table
from tokviz.core.unigram.timeline import UnigramSettings, UnigramTimeline, train_unigram

TEXT = ("the quick brown fox jumps over the lazy dog; the dog sleeps, the fox runs. "
        "über straße naïve café — 東京 タワー, hugs and bugs and pugs and mugs and hug bugs ") * 6


@pytest.fixture(scope="module")
def trained() -> UnigramTimeline:
    tl = train_unigram(UnigramSettings(vocab_size=60, seed_min_count=1, special_tokens=("<s>",)), texts=[TEXT])
    assert tl.n_rounds >= 3
    return tl


def as_tuples(tl: UnigramTimeline) -> UnigramTimeline:
    """The same timeline with rounds made of tuples (as a round sent to another process is)."""
    rounds = pickle.loads(pickle.dumps(tl.rounds))
    assert all(r.columns is None for r in rounds)
    return UnigramTimeline(tl.settings, rounds, tl.corpus_length, tl.n_chunks, tl.seed_size, tl.finished)


def as_tuples_round(r: UnigramRound) -> UnigramRound:
    return pickle.loads(pickle.dumps(r))


def test_trained_and_loaded_rounds_keep_arrays_of_one_table(trained):
    assert shared_table(trained.rounds) is not None
    loaded = from_json(to_json(trained))
    assert shared_table(loaded.rounds) is not None
    assert list(shared_table(loaded.rounds).strings) == loaded.pieces()
    assert np.array_equal(id_order(loaded.rounds), np.arange(len(loaded.pieces())))


def test_arrays_and_tuples_give_the_same_ids_scores_and_model_file(trained):
    tuples = as_tuples(trained)
    assert shared_table(tuples.rounds) is None  # the tuple path
    assert trained.pieces() == tuples.pieces()
    assert trained.scores_by_round() == tuples.scores_by_round()
    assert all(trained.scores(k) == tuples.scores(k) for k in range(trained.n_rounds))
    assert to_json(trained) == to_json(tuples)
    assert trained.pruning() == tuples.pruning()
    rounds_of, scores = trained.pruning()
    ids = {p: i for i, p in enumerate(trained.pieces())}
    assert rounds_of[:trained.rounds[-1].n_pieces] == [-1] * trained.rounds[-1].n_pieces
    assert scores[:trained.rounds[-1].n_pieces] == trained.scores()
    for r in trained.rounds:
        assert all(rounds_of[ids[p.piece]] == r.index and scores[ids[p.piece]] == p.score for p in r.pruned)
    assert sorted(rounds_of).count(-1) == trained.rounds[-1].n_pieces
    assert trained.rounds == tuples.rounds
    loaded = from_json(to_json(tuples))
    assert loaded.rounds == trained.rounds and to_json(loaded) == to_json(trained)


def test_tuples_from_arrays_match_the_rules(trained):
    """Each round lists its vocabulary by score (ties: string), ids are a prefix, and the pruned
    pieces carry their alternatives (made of pieces of the round before)."""
    ids = trained.pieces()
    for k, r in enumerate(trained.rounds):
        assert r.n_pieces == len(r.pieces) == len(r.scores) == r.vocab_size - trained.n_special
        assert [(-s, p) for p, s in zip(r.pieces, r.scores)] == sorted((-s, p) for p, s in zip(r.pieces, r.scores))
        assert set(r.pieces) == set(ids[:r.n_pieces])
        fresh = UnigramRound(r.index, r.vocab_size, r.log_likelihood, r.em_log_likelihood, r.viterbi_tokens,
                             columns=r.columns)
        assert all(fresh.first_pruned(n) == r.pruned[:n] for n in (0, 1, 3, r.n_pruned, r.n_pruned + 5))
        assert fresh.n_unused_pruned == sum(1 for p in r.pruned if not p.freq) == as_tuples_round(r).n_unused_pruned
        assert r.n_pruned == len(r.pruned) and (k > 0 or not r.pruned)
        before = set(trained.rounds[k - 1].pieces) if k else set()
        for p in r.pruned:
            assert p.piece in before and p.piece not in r.pieces
            assert (p.freq > 0) == bool(p.alternative) and "".join(p.alternative) in ("", p.piece)
            assert set(p.alternative) <= before - {p.piece}


def test_a_round_is_sent_and_copied_as_tuples(trained):
    r = trained.rounds[1]
    sent = pickle.dumps(r)
    assert b"PieceTable" not in sent and b"RoundColumns" not in sent  # not the whole table with every round
    for other in (pickle.loads(sent), copy.deepcopy(r)):
        assert other.columns is None and other == r and hash(other) == hash(r)
        assert (other.pieces, other.scores, other.pruned) == (r.pieces, r.scores, r.pruned)
    assert "pruned=" in repr(r) and r != trained.rounds[2]


def test_a_round_needs_tuples_or_columns():
    with pytest.raises(TypeError, match="columns"):
        UnigramRound(0, 3, -1.0, (-1.0,), 5, pieces=("a",), scores=(-1,))
    table = PieceTable(["b", "a", "ab"], np.array([1, 0, 2]))
    r = UnigramRound(0, 4, -1.0, (-1.0,), 5, columns=RoundColumns(table, np.array([0, 1, 2]), np.array([-5, -5, -9])))
    assert (r.pieces, r.scores, r.pruned) == (("a", "b", "ab"), (-5, -5, -9), ())  # ties: string order
