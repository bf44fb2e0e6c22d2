"""The trained Unigram tokenizer runs the shared encoder (`tokviz.core.unigram.encoder.PieceLattice`
in its integer mode): its paths equal a plain integer Viterbi over every substring, compiled and
plain, also where scores are beyond what doubles add exactly."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.jit_switch import jit_off
from tokviz.core import parse_split
from tokviz.core.unigram.encoder import INT, PieceLattice
from tokviz.core.unigram.timeline import SCORE_SCALE, UnigramSettings, UnigramTokenizer, train_unigram
from tokviz.core.unigram.tokenizer import UNK_PENALTY

JIT = pytest.mark.parametrize("plain", [False, True], ids=["compiled", "plain"])


def reference_path(text: str, scores: dict[str, int], unk: int) -> list[tuple[int, int, str | None]]:
    """The best path as (start, end, piece; None: unknown): node by node, starts ascending, a
    strict ``>`` (ties: the longest last piece, then recursively to the left), integer sums."""
    best: list[int | None] = [0] + [None] * len(text)
    back: list[tuple[int, str | None]] = [(0, None)] * (len(text) + 1)
    for t in range(1, len(text) + 1):
        for s in range(t):
            piece = text[s:t]
            if piece in scores:
                c = best[s] + scores[piece]
            elif s == t - 1 and text[s] not in scores:
                c, piece = best[s] + unk, None
            else:
                continue
            if best[t] is None or c > best[t]:
                best[t], back[t] = c, (s, piece)
    out = []
    t = len(text)
    while t:
        s, piece = back[t]
        out.append((s, t, piece))
        t = s
    return out[::-1]


def encoded(tok: UnigramTokenizer, text: str) -> list[tuple[int, int, str | None]]:
    enc = tok.encode_ordinary(text)
    return [(a, b, None if i == tok.unk_id else tok.token_str(i)) for i, (a, b) in zip(enc.ids, enc.spans)]


def tokenizer(scores: dict[str, int], plain: bool) -> UnigramTokenizer:
    with jit_off() if plain else contextlib.nullcontext():
        tok = UnigramTokenizer(list(scores), [list(scores.values())], parse_split("none"), word_prefix=None)
        tok.piece_lattice()  # made here: with or without the compiled kernels
    return tok


@JIT
@settings(max_examples=150, deadline=None, database=None)
@given(vocab=st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=4),
                             st.integers(-4, -1).map(lambda x: x * SCORE_SCALE), min_size=1, max_size=14),
       text=st.text(alphabet="abcd", max_size=30))
def test_paths_equal_the_integer_viterbi(plain, vocab, text):
    tok = tokenizer(vocab, plain)
    assert encoded(tok, text) == reference_path(text, vocab, min(vocab.values()) - UNK_PENALTY)


@JIT
def test_scores_beyond_exact_doubles(plain):
    """``a`` + ``b`` beats ``ab`` by one unit, which doubles round away (both -2**53 - 4): the
    integer lattice keeps the exact answer, the compiled doubles are not used for it."""
    big = 2**53
    vocab = {"a": -big - 2, "b": -1, "ab": -big - 4}
    assert float(vocab["a"]) + vocab["b"] == float(vocab["ab"])  # a tie in doubles
    tok = tokenizer(vocab, plain)
    assert encoded(tok, "ab") == [(0, 1, "a"), (1, 2, "b")]
    assert tok.piece_lattice().compiled is None
    assert tok.nbest("ab", 2)[0].pieces == ("a", "b")
    assert encoded(tok, "abxab") == reference_path("abxab", vocab, vocab["ab"] - UNK_PENALTY)


def test_compiled_only_below_exact_doubles():
    """The compiled Viterbi takes a text only while every sum on it stays exact in doubles; a
    longer one takes the integer path, with the same rule."""
    big = 2**46
    vocab = {"a": -big, "b": -big - 1, "ab": -2 * big - 1, "ba": -2 * big, "aba": -3 * big - 1}
    tok = tokenizer(vocab, False)
    lat = tok.piece_lattice()
    unk = min(vocab.values()) - UNK_PENALTY
    top = -unk
    assert 0 < lat.compiled_max_len and (lat.compiled_max_len + 1) * top < 2**53 <= (lat.compiled_max_len + 4) * top
    rng = random.Random(2)
    for n in (3, lat.compiled_max_len, lat.compiled_max_len + 1, 90):
        for _ in range(30):
            text = "".join(rng.choice("abx") for _ in range(n))
            assert encoded(tok, text) == reference_path(text, vocab, unk), text
    with pytest.raises(ValueError, match="unknown score"):
        PieceLattice(["a"], [-1], mode=INT)


@JIT
def test_a_trained_model_equals_the_integer_viterbi(plain):
    text = open_corpus()
    tl = train_unigram(UnigramSettings(vocab_size=300), texts=[text[:60_000]])
    rng = random.Random(4)
    words = list(dict.fromkeys(text.split()))
    sample = rng.sample(words, min(400, len(words))) + ["zq\u00e9\u4e00x", "a" * 300]
    for step in (0, tl.n_steps // 2, None):
        with jit_off() if plain else contextlib.nullcontext():
            tok = UnigramTokenizer.from_timeline(tl)
            lat = tok.piece_lattice(step)
        assert (lat.compiled is None) == plain
        k = tok.n_steps - 1 if step is None else step
        scores = dict(zip(tok.pieces, tok.scores[k]))
        unk = min(scores.values()) - UNK_PENALTY
        for w in sample:
            path = reference_path("\u2581" + w, scores, unk)
            want = [(max(a - 1, 0), b - 1, p) for a, b, p in path]
            enc = tok.encode_ordinary(w, step=step)
            got = [(a, b, None if i == tok.unk_id else tok.token_str(i)) for i, (a, b) in zip(enc.ids, enc.spans)]
            assert got == want, w


def open_corpus() -> str:
    from tests.conftest import shared_file

    with open(shared_file("corpora", "tinyshakespeare.txt"), encoding="utf-8") as f:
        return f.read(200_000)
