"""The readable Unigram reference (tokviz/core/unigram/reference.py) against tokviz's real trainer
and tokenizer: the same Viterbi pieces for the same vocabulary and scores, and the same rounds
(pieces, integer scores, log-likelihood) when both train on the same corpus."""

from __future__ import annotations

import doctest
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tokviz.core import count_chunks, parse_split
from tokviz.core.unigram import reference
from tokviz.core.unigram.rounds import SCORE_SCALE
from tokviz.core.unigram.tokenizer import UNK_PENALTY, UnigramTokenizer
from tokviz.core.unigram.trainer import UnigramTrainer

HYPOTHESIS = settings(max_examples=60, deadline=None, database=None)
COURSE = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def test_same_units_as_the_real_model():
    assert (reference.SCORE_SCALE, reference.UNK_PENALTY) == (SCORE_SCALE, UNK_PENALTY)


def assert_same_rounds(counts: dict[str, int], target: int, **kw) -> int:
    trainer = UnigramTrainer(list(counts), list(counts.values()), target_pieces=target, **kw)
    got = [(dict(zip(r.pieces, r.scores)), r.log_likelihood) for r in trainer.rounds()]
    expected = reference.train(counts, target, **kw)
    assert len(got) == len(expected)
    for k, ((scores, ll), (ref_scores, ref_ll)) in enumerate(zip(got, expected)):
        assert scores == ref_scores, f"round {k}"
        assert ll == pytest.approx(ref_ll, rel=1e-12, abs=1e-9), f"round {k}"
    return len(got)


def test_seed_known_answer():
    """``abab`` x3, ``ab`` x2, pieces of at most 3 characters: ab (8 x 2 = 16) beats aba and bab
    (3 x 3 = 9 each; aba is seen first); a and b are always kept."""
    logp = reference.seed({"abab": 3, "ab": 2}, size=4, max_piece_chars=3, prefix="")
    assert {p: round(math.exp(lp) * 41, 9) for p, lp in logp.items()} == {"a": 8, "b": 8, "ab": 16, "aba": 9}


def test_em_known_answer():
    """``ab`` x1 with p(a) = p(b) = 0.25, p(ab) = 0.5: Z = 1/16 + 1/2, E[ab] = 8/9, E[a] = E[b] = 1/9."""
    logp, ll = reference.em_step({"ab": 1}, {"a": math.log(0.25), "b": math.log(0.25), "ab": math.log(0.5)})
    assert ll == pytest.approx(math.log(9 / 16))
    assert {p: math.exp(lp) for p, lp in logp.items()} == pytest.approx({"a": 0.1, "b": 0.1, "ab": 0.8})


def test_same_rounds_as_the_trainer_on_the_course_corpus():
    assert assert_same_rounds(COURSE, 12) == 4


@pytest.mark.parametrize(("name", "chars", "target"), [("tinyshakespeare.txt", 1500, 80), ("udhr2_all.txt", 800, 60)])
def test_same_rounds_as_the_trainer_on_real_text(corpus_text, name, chars, target):
    counts = count_chunks([corpus_text(name, chars)], parse_split("whitespace"))
    assert assert_same_rounds(counts, target) > 3


def cut_on_a_float_tie(counts: dict[str, int], target: int, *, max_piece_chars: int, em_iterations: int) -> bool:
    """Whether some round of the reference prunes at a cut between two pieces whose losses agree
    to 1e-9 (other than unused pieces, which lose exactly 0.0): which of them goes then depends on
    the order floats are summed in (the trainer sums with numpy), not on the rule, so the two may
    part there without either being wrong."""
    texts = {reference.WORD_PREFIX + w: n for w, n in counts.items()}
    logp = reference.seed(counts, size=10 * target, max_piece_chars=max_piece_chars, prefix=reference.WORD_PREFIX)
    n_chars = sum(1 for p in logp if len(p) == 1)
    while len(logp) > max(target, n_chars):
        for _ in range(em_iterations):
            logp, _ = reference.em_step(texts, logp)
        size = len(logp)
        keep = int(size * 0.75)
        n_drop = size - max(target, min(target if keep < target * 1.1 else keep, size - 1))
        losses = sorted(reference.prune_losses(texts, logp).values())
        a, b = (losses[n_drop - 1], losses[n_drop]) if 0 < n_drop < len(losses) else (0.0, 0.0)
        if a and math.isclose(a, b, rel_tol=1e-9):  # unused pieces lose exactly 0.0 on both sides
            return True
        logp = reference.prune(texts, logp, n_drop)
    return False


def test_a_float_tie_at_the_cut_is_recognised():
    """The case hypothesis found: two pieces' losses are equal to the last bit in the reference and
    the trainer drops the other one."""
    counts = {"bac": 1, "bbaacb": 2, "ca": 3, "aabcac": 4, "aaa": 1, "aab": 2, "ababbb": 3}
    assert cut_on_a_float_tie(counts, 10, max_piece_chars=4, em_iterations=1)
    assert not cut_on_a_float_tie(COURSE, 12, max_piece_chars=16, em_iterations=2)


@HYPOTHESIS
@given(words=st.lists(st.text(alphabet="abc", min_size=1, max_size=6), min_size=1, max_size=8),
       target=st.integers(3, 12), em_iterations=st.integers(1, 3))
def test_same_rounds_as_the_trainer_random(words, target, em_iterations):
    counts: dict[str, int] = {}
    for n, w in enumerate(words):
        counts[w] = counts.get(w, 0) + 1 + n % 4
    assume(not cut_on_a_float_tie(counts, target, max_piece_chars=4, em_iterations=em_iterations))
    assert_same_rounds(counts, target, max_piece_chars=4, em_iterations=em_iterations)


@HYPOTHESIS
@given(pieces=st.lists(st.text(alphabet="\u2581abc", min_size=1, max_size=4), min_size=1, max_size=12, unique=True),
       data=st.data(),
       words=st.lists(st.text(alphabet="abcd", min_size=1, max_size=8), min_size=1, max_size=5))
def test_same_pieces_as_the_tokenizer(pieces, data, words):
    """Any vocabulary and integer scores (ties included), unknown characters (``d``)."""
    scores = data.draw(st.lists(st.integers(-6, -1), min_size=len(pieces), max_size=len(pieces)))
    scores = [s * SCORE_SCALE // 2 for s in scores]  # few distinct values: many exact ties
    tok = UnigramTokenizer(pieces, [scores], parse_split("whitespace"))
    table = dict(zip(pieces, scores))
    for word in words:
        expected = reference.encode_word(word, table)
        got = [reference.UNK if i == tok.unk_id else pieces[i - tok.n_special] for i in tok.encode(word).ids]
        assert got == expected, word


def test_same_pieces_as_a_trained_tokenizer_at_every_round(corpus_text):
    counts = count_chunks([corpus_text("tinyshakespeare.txt", 1500)], parse_split("whitespace"))
    rounds = reference.train(counts, 80)
    trainer = UnigramTrainer(list(counts), list(counts.values()), target_pieces=80)
    names = [set(r.pieces) for r in trainer.rounds()]
    pieces = sorted(set().union(*names), key=lambda p: [p in n for n in names].count(False))  # longest-lived first
    ordered = [[table[p] for p in pieces if p in table] for table, _ in rounds]
    tok = UnigramTokenizer(pieces, ordered, parse_split("whitespace"))
    words = list(counts)[:200] + ["zyzzyva", "Shakespeare's"]
    for k, (table, _) in enumerate(rounds):
        for word in words:
            got = [reference.UNK if i == tok.unk_id else pieces[i - tok.n_special] for i in tok.encode(word, step=k).ids]
            assert got == reference.encode_word(word, table), (k, word)


def test_docstring_examples():
    result = doctest.testmod(reference)
    assert result.attempted > 0 and result.failed == 0
