"""Unigram encoding: Viterbi, n-best and sampling against brute-force enumeration of every
segmentation, round trips, [UNK], spans, steps, explain() and decoding."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import EncodeError, parse_split
from tokviz.core.unigram.timeline import SCORE_SCALE, UnigramSettings, UnigramTokenizer, train_unigram
from tokviz.core.unigram.tokenizer import UNK_PENALTY

HYPOTHESIS = settings(max_examples=200, deadline=None, database=None)


def all_segmentations(text: str, scores: dict[str, int]) -> list[tuple[list[tuple[int, int, str]], int]]:
    """Every segmentation of `text` as ([(start, end, piece)], summed score). A character that is
    not a piece is an [UNK] scored UNK_PENALTY below the least probable piece."""
    unk = min(scores.values()) - UNK_PENALTY
    out = []

    def walk(pos, path, total):
        if pos == len(text):
            out.append((list(path), total))
            return
        for end in range(pos + 1, len(text) + 1):
            piece = text[pos:end]
            if piece in scores:
                walk(end, path + [(pos, end, piece)], total + scores[piece])
            elif end == pos + 1 and piece not in scores:
                walk(end, path + [(pos, end, "[UNK]")], total + unk)

    walk(0, [], 0)
    return out


def rank_key(seg):
    """The documented order: higher score first; ties: longest last piece, then to the left."""
    path, total = seg
    return (-total, tuple(s for s, _, _ in reversed(path)))


def plain_tokenizer(scores: dict[str, int], *, prefix=None, split="none") -> UnigramTokenizer:
    return UnigramTokenizer(list(scores), [list(scores.values())], parse_split(split), word_prefix=prefix)


vocabularies = st.dictionaries(
    st.text(alphabet="abc", min_size=1, max_size=3),
    st.integers(-6, -1).map(lambda x: x * SCORE_SCALE // 2),  # few distinct values: many ties
    min_size=1,
    max_size=10,
)
words = st.text(alphabet="abcd", min_size=1, max_size=7)


@HYPOTHESIS
@given(vocab=vocabularies, word=words)
def test_viterbi_matches_brute_force(vocab, word):
    tok = plain_tokenizer(vocab)
    best = min(all_segmentations(word, vocab), key=rank_key)
    enc = tok.encode(word)
    assert [tok.token_str(i) for i in enc.ids] == [p for _, _, p in best[0]]
    assert enc.spans == [(s, e) for s, e, _ in best[0]]
    assert tok.nbest(word, 1)[0].score == best[1]


@HYPOTHESIS
@given(vocab=vocabularies, word=words, n=st.integers(1, 12))
def test_nbest_matches_brute_force(vocab, word, n):
    tok = plain_tokenizer(vocab)
    segs = sorted(all_segmentations(word, vocab), key=rank_key)
    log_z = math.log(sum(math.exp(t / SCORE_SCALE) for _, t in segs))
    got = tok.nbest(word, n)
    assert [(list(g.pieces), g.score) for g in got] == [([p for _, _, p in path], t) for path, t in segs[:n]]
    for g, (_, t) in zip(got, segs):
        assert g.prob == pytest.approx(math.exp(t / SCORE_SCALE - log_z), rel=1e-9)
    explained = tok.explain(word, n=n)
    assert explained.n_segmentations == len(segs)
    assert explained.log_z == pytest.approx(log_z, rel=1e-12)
    assert explained.best == got[0] and list(explained.nbest) == got
    if n >= len(segs):
        assert sum(g.prob for g in got) == pytest.approx(1.0)


UNBELIEVABLE = {
    "\u2581un": math.log(0.1), "believ": math.log(0.05), "able": math.log(0.1), "\u2581unbeliev": math.log(0.004),
    **{c: math.log(1e-4) for c in "\u2581unbelivabl"},
}


def test_unbelievable_top_segmentations():
    """Worked by hand with p(▁un) = 0.1, p(believ) = 0.05, p(able) = 0.1, p(▁unbeliev) = 0.004 and
    1e-4 for each single character:
      ▁un believ able    0.1 * 0.05 * 0.1 = 5e-4
      ▁unbeliev able     0.004 * 0.1      = 4e-4
    every other segmentation uses at least two single characters (<= 1e-4 * 1e-4 * 0.1), so the
    probabilities given the word are about 5/9 and 4/9."""
    tok = UnigramTokenizer.from_log_probs(UNBELIEVABLE)
    top = tok.nbest("unbelievable", 3)
    assert [t.pieces for t in top[:2]] == [("\u2581un", "believ", "able"), ("\u2581unbeliev", "able")]
    assert top[0].prob == pytest.approx(5 / 9, rel=1e-3)
    assert top[1].prob == pytest.approx(4 / 9, rel=1e-3)
    assert top[2].prob < 1e-3
    assert top[0].log_prob == pytest.approx(math.log(5e-4), abs=1e-5)
    assert top[0].spans == ((0, 2), (2, 8), (8, 12))
    assert tok.encode("unbelievable").tokens == ["\u2581un".encode(), b"believ", b"able"]


def test_sampling_frequencies_approach_probabilities():
    """3000 seeded draws of "unbelievable" with alpha = 1: each segmentation appears about as
    often as its probability says (within 4 standard deviations)."""
    tok = UnigramTokenizer.from_log_probs(UNBELIEVABLE)
    n = 3000
    rng = random.Random(7)
    draws = Counter(tok.sample("unbelievable", rng=rng).pieces for _ in range(n))
    for seg in tok.nbest("unbelievable", 2):
        sigma = math.sqrt(seg.prob * (1 - seg.prob) / n)
        assert abs(draws[seg.pieces] / n - seg.prob) < 4 * sigma
    assert sum(draws.values()) == n
    again = Counter(tok.sample("unbelievable", rng=random.Random(7)).pieces for _ in range(1))
    assert again == Counter(tok.sample("unbelievable", rng=7).pieces for _ in range(1))


def test_sampling_alpha_flattens_towards_uniform():
    """alpha = 0: every segmentation of "ab" (a b, ab) is equally likely; alpha = 3 sharpens."""
    tok = plain_tokenizer({"a": -4 * SCORE_SCALE, "b": -4 * SCORE_SCALE, "ab": -2 * SCORE_SCALE})
    rng = random.Random(3)
    flat = Counter(tok.sample("ab", alpha=0.0, rng=rng).pieces for _ in range(2000))
    assert abs(flat[("ab",)] / 2000 - 0.5) < 0.05
    # alpha = 3: p ∝ exp(3 * -2) vs exp(3 * -8)
    sharp = Counter(tok.sample("ab", alpha=3.0, rng=rng).pieces for _ in range(500))
    assert sharp[("ab",)] == 500
    enc = tok.encode_sampled("abab", alpha=0.0, rng=1)
    assert tok.decode(enc.ids) == "abab" and enc.spans[0][0] == 0 and enc.spans[-1][1] == 4


@HYPOTHESIS
@given(
    extra=st.lists(st.text(alphabet="ab c😀\n", min_size=2, max_size=4), max_size=8),
    text=st.text(alphabet="ab c😀\n", max_size=40),
    split=st.sampled_from(["none", "gpt2", "gpt4"]),
)
def test_round_trip_over_characters_covering_the_alphabet(extra, text, split):
    """With every character a piece and a lossless split (no prefix marker), decoding any encoding
    gives the text back, and the spans tile it."""
    pieces = dict.fromkeys(list("ab c😀\n") + extra)
    scores = {p: -len(p) * SCORE_SCALE // 3 - i for i, p in enumerate(pieces)}
    tok = plain_tokenizer(scores, split=split)
    enc = tok.encode(text)
    assert enc.lossless
    assert tok.decode(enc.ids) == text
    assert "".join(text[a:b] for a, b in enc.spans) == text
    assert [text[a:b].encode() for a, b in enc.spans] == enc.tokens
    assert b"".join(tok.decode_tokens_bytes(enc.ids)) == tok.decode_bytes(enc.ids) == text.encode()
    assert tok.encode_ids(text) == enc.ids
    sampled = tok.encode_sampled(text, alpha=0.5, rng=0)
    assert tok.decode(sampled.ids) == text


@HYPOTHESIS
@given(text=st.text(alphabet="ab c\n", max_size=40))
def test_round_trip_with_word_prefix(text):
    """Whitespace splitting and the ▁ prefix: decoding gives the words joined by single spaces."""
    scores = {p: -SCORE_SCALE * (i + 1) for i, p in enumerate(["\u2581", "a", "b", "c", "\u2581a", "ab", "\u2581ab"])}
    tok = plain_tokenizer(scores, prefix="\u2581", split="whitespace")
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == " ".join(text.split())
    assert b"".join(tok.decode_tokens_bytes(enc.ids)) == tok.decode_bytes(enc.ids)
    # the marker has no width: spans hold the text without it
    assert [text[a:b] for a, b in enc.spans] == [tok.token_str(i).replace("\u2581", "") for i in enc.ids]


def test_unknown_characters():
    tok = plain_tokenizer({"a": -SCORE_SCALE, "ab": -SCORE_SCALE}, split="whitespace")
    enc = tok.encode("axxab")
    assert enc.ids == [1, 0, 0, 2] and enc.unknown == [1, 2]
    assert enc.spans == [(0, 1), (1, 2), (2, 3), (3, 5)]
    assert tok.decode(enc.ids) == "a[UNK][UNK]ab"
    lattice = tok.explain("axb").edges
    assert [(e.start, e.end, e.piece) for e in lattice] == [(0, 1, "a"), (1, 2, "[UNK]"), (2, 3, "[UNK]")]
    assert lattice[1].score == -SCORE_SCALE - UNK_PENALTY


def test_specials_and_errors():
    tok = UnigramTokenizer(["\u2581", "a"], [[-1, -2]], parse_split("whitespace"), special_tokens=("<s>",))
    enc = tok.encode("<s>a", allowed_special={"<s>"})
    assert enc.ids[0] == 1 and enc.special == [0] and tok.token_str(1) == "<s>"
    assert tok.decode(enc.ids) == "<s> a"
    with pytest.raises(EncodeError, match="allowed_special"):
        tok.encode("<s>")
    with pytest.raises(EncodeError, match="distinct"):
        UnigramTokenizer(["a", "a"], [[-1, -1]], parse_split("none"))
    with pytest.raises(EncodeError, match="not in the vocabulary"):
        tok.decode([7])


@pytest.fixture(scope="module")
def trained():
    text = ("the cat sat on the mat. the dog sat on the log. unbelievable cats and dogs. " * 3
            + "a believer believes; believable, unbelievably able. ")
    return train_unigram(UnigramSettings(vocab_size=40, seed_min_count=1, seed_size=400), texts=[text])


def test_steps_are_rounds_and_ids_are_prefixes(trained):
    tok = trained.tokenizer()
    assert tok.n_steps == trained.n_rounds >= 3
    assert tok.n_vocab == 40 == trained.vocab_size
    for k, r in enumerate(trained.rounds):
        assert tok.n_vocab_at(k) == r.vocab_size
        assert set(r.pieces) == {tok.token_str(i) for i in range(1, r.vocab_size)}
        ids = tok.encode_ids("the unbelievable believer", step=k)
        assert max(ids) < r.vocab_size
        assert tok.decode(ids) == "the unbelievable believer"
        lp = tok.log_prob(tok.encode_ids("the", step=k)[0], step=k)
        assert lp is not None and lp < 0
    pruned_early = trained.rounds[1].pruned[0].piece
    pid = 1 + trained.pieces().index(pruned_early)
    assert tok.log_prob(pid, step=0) is not None and tok.log_prob(pid) is None
    assert tok.token_str(pid) == pruned_early  # ids of earlier rounds still decode
