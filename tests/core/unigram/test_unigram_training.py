"""Unigram training: the seed, EM against brute-force expected counts, the batched lattices
against brute force, SentencePiece's pruning loss recomputed independently, the schedule,
stages and model files."""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.core.unigram.timeline as unigram_module
from tokviz.core import CorpusError, ModelFormatError, SettingsError, count_chunks, parse_split
from tokviz.core.unigram.lattice import Lattices
from tokviz.core.unigram.model_file import from_json, to_json
from tokviz.core.unigram.timeline import (
    SCORE_SCALE,
    UnigramSettings,
    UnigramTokenizer,
    UnigramTrainer,
    UnigramTraining,
    train_unigram,
)
from tokviz.core.unigram.trainer import first_by_keys, substrings

HYPOTHESIS = settings(max_examples=120, deadline=None, database=None)


def segmentations(text: str, vocab) -> list[list[str]]:
    """Every segmentation of `text` into pieces of `vocab` (a container of strings)."""
    if not text:
        return [[]]
    return [[text[:i]] + rest for i in range(1, len(text) + 1) if text[:i] in vocab
            for rest in segmentations(text[i:], vocab)]


def brute_expected_counts(words: dict[str, int], logp: dict[str, float]):
    """(expected count of each piece, log-likelihood) by enumerating every segmentation."""
    counts = dict.fromkeys(logp, 0.0)
    ll = 0.0
    for w, n in words.items():
        segs = segmentations(w, logp)
        probs = [math.exp(sum(logp[p] for p in s)) for s in segs]
        z = sum(probs)
        ll += n * math.log(z)
        for s, p in zip(segs, probs):
            for piece in s:
                counts[piece] += n * p / z
    return counts, ll


# -- seed ---------------------------------------------------------------------------------------


def test_seed_known_answer():
    """abab x3, ab x2 (no prefix, pieces of at most 3 characters). Counts: a 8, b 8, ab 8, ba 3,
    aba 3, bab 3. Ranked by count * length: ab 16, then aba 9 and bab 9 tie and aba was seen
    first, then ba 6. A seed of 4 keeps a and b (always) + ab and aba; initial log-probabilities
    are log(count * length / 41)."""
    t = UnigramTrainer(["abab", "ab"], [3, 2], target_pieces=3, word_prefix=None, max_piece_chars=3, seed_size=4)
    assert t.pieces == ["a", "ab", "aba", "b"]
    assert np.allclose(np.exp(t.logp), np.array([8, 16, 9, 8]) / 41)
    assert list(t.piece_len) == [1, 2, 3, 1]


def test_seed_min_count_and_prefix():
    t = UnigramTrainer(["hug", "hugs", "pug"], [1, 1, 1], target_pieces=5)
    assert t.pieces[0] == "\u2581" and set("\u2581hugsp") <= set(t.pieces)
    multi = [p for p in t.pieces if len(p) > 1]
    assert multi and all(p in {"\u2581h", "\u2581hu", "\u2581hug", "hu", "hug", "ug"} for p in multi)  # seen twice


@HYPOTHESIS
@given(texts=st.lists(st.text(alphabet="ab\u2581😀\udc80", min_size=1, max_size=12), min_size=1, max_size=5),
       m=st.integers(1, 6))
def test_substrings_match_slicing(texts, m):
    sid, lat, start, end, joined = substrings(texts, m)[:5]
    index: dict[str, int] = {}
    expected = [(index.setdefault(t[i:j], len(index)), k, i, j)
                for k, t in enumerate(texts) for i in range(len(t)) for j in range(i + 1, min(len(t), i + m) + 1)]
    assert list(zip(sid.tolist(), lat.tolist(), start.tolist(), end.tolist())) == expected
    assert joined == "".join(texts)


@settings(max_examples=15, deadline=None, database=None)
@given(seeds=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=12), min_size=1, max_size=6),
       m=st.integers(5, 9))
def test_substrings_longer_than_a_packed_word(seeds, m):
    """With 5,000 characters in the alphabet only 4 fit in a 64-bit word: longer substrings are
    grouped by (group one character shorter, last character)."""
    filler = "".join(chr(0x4E00 + i) for i in range(5000))
    texts = ["".join(filler[c * 997 % 5000] if c else "a" for c in seed) for seed in seeds] + [filler]
    test_substrings_match_slicing.hypothesis.inner_test(texts, m)


@HYPOTHESIS
@given(keys=st.lists(st.tuples(st.integers(-1, 1), st.integers(-3, 2)), max_size=40), huge=st.booleans(),
       data=st.data())
def test_first_by_keys_is_a_full_lexsort_cut(keys, huge, data):
    """Pruning sorts only the pieces below the n-th smallest loss, and picks the first of those
    equal to it by (score, rank) as one integer: the same first n as sorting them all (ties at the
    cut included; with `huge`, scores too far apart for one integer sort by two)."""
    m = len(keys)
    n = data.draw(st.integers(0, m + 2))
    items = np.arange(100, 100 + m)
    if huge:
        keys = [(k, t * 2**60) for k, t in keys]
    key = np.array([k / 2 for k, _ in keys], dtype=float)
    tie = np.array([t for _, t in keys], dtype=np.int64)
    tie2 = np.array(data.draw(st.permutations(range(m))), dtype=np.int64)
    assert np.array_equal(first_by_keys(items, n, key, tie, tie2), items[np.lexsort((tie2, tie, key))][:n])


@pytest.mark.parametrize("n", [1, 700, 3000, 4500])
def test_first_by_keys_on_a_round_of_unused_pieces(n):
    """Thousands of pieces losing 0 beside a few that lose more or less (a round's candidates):
    the first n by lexsort, whether the cut falls among the zeros or past them."""
    rng = np.random.default_rng(7)
    m = 5000
    key = np.where(rng.random(m) < 0.8, 0.0, rng.normal(size=m))
    tie = rng.integers(-90_000_000, -1_000_000, size=m) // 1000 * 1000  # scores, some equal
    tie2 = rng.permutation(m)
    items = np.arange(m) + 10
    assert np.array_equal(first_by_keys(items, n, key, tie, tie2), items[np.lexsort((tie2, tie, key))][:n])


# -- lattices and EM ----------------------------------------------------------------------------


def lattice_of(words: list[str], pieces: list[str]) -> Lattices:
    index = {p: i for i, p in enumerate(pieces)}
    rows = [(k, i, j, index[w[i:j]]) for k, w in enumerate(words)
            for i in range(len(w)) for j in range(i + 1, len(w) + 1) if w[i:j] in index]
    lat, start, end, piece = (np.array(c, dtype=np.int64) for c in zip(*rows))
    return Lattices(np.array([len(w) for w in words]), lat, start, end, piece)


@HYPOTHESIS
@given(
    words=st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=6), st.integers(1, 4), min_size=1, max_size=5),
    extra=st.lists(st.text(alphabet="abc", min_size=2, max_size=3), max_size=6, unique=True),
    raw=st.lists(st.integers(1, 50), min_size=9, max_size=9),
)
def test_batched_lattices_match_brute_force(words, extra, raw):
    pieces = list(dict.fromkeys(["a", "b", "c", *extra]))
    logp = np.log(np.array([raw[i % 9] + i for i in range(len(pieces))], dtype=float))
    logp -= np.log(np.exp(logp).sum())
    lp = dict(zip(pieces, logp.tolist()))
    lattice = lattice_of(list(words), pieces)
    counts, ll = lattice.expected_counts(logp, np.array(list(words.values()), dtype=float), len(pieces))
    ref_counts, ref_ll = brute_expected_counts(words, lp)
    assert ll == pytest.approx(ref_ll, rel=1e-9)
    assert counts == pytest.approx([ref_counts[p] for p in pieces], rel=1e-9, abs=1e-12)
    # Viterbi with quantized scores: the documented tie rule, checked by brute force
    q = np.rint(logp * 4) / 4  # coarse grid: many exact ties
    lat, start, end, piece = lattice.viterbi(q)
    for k, w in enumerate(words):
        segs = segmentations(w, lp)
        qs = dict(zip(pieces, q.tolist()))

        def key(s):
            starts = np.cumsum([0] + [len(p) for p in s])[:-1]
            return (-sum(qs[p] for p in s), tuple(reversed(starts.tolist())))

        best = min(segs, key=key)
        mine = sorted((s, pieces[p]) for kk, s, p in zip(lat.tolist(), start.tolist(), piece.tolist()) if kk == k)
        assert [p for _, p in mine] == best


def test_em_step_known_answer():
    """One E-step on "ab" x1 with p(a) = p(b) = 0.25, p(ab) = 0.5: segmentations a|b (1/16) and ab
    (1/2); Z = 9/16, so E[ab] = 8/9 and E[a] = E[b] = 1/9. The M-step gives p(ab) = 0.8,
    p(a) = p(b) = 0.1, and the likelihood rises from log(9/16) to log(0.81)."""
    t = UnigramTrainer(["ab"], [1], target_pieces=3, word_prefix=None, seed_min_count=1)
    assert t.pieces == ["a", "ab", "b"]
    t.logp = np.log(np.array([0.25, 0.5, 0.25]))
    counts, ll = t.lattice.expected_counts(t.logp, t.weights, 3)
    assert counts == pytest.approx([1 / 9, 8 / 9, 1 / 9])
    assert ll == pytest.approx(math.log(9 / 16))
    t.logp = t.m_step(counts)
    assert np.exp(t.logp) == pytest.approx([0.1, 0.8, 0.1])
    assert t.lattice.log_z(t.logp)[0] == pytest.approx(math.log(0.8 + 0.01))


TEXT = ("the cat sat on the mat. the dog sat on the log. unbelievable cats and dogs. " * 4
        + "a believer believes; believable, unbelievably able. the end")


@pytest.fixture(scope="module")
def timeline():
    return train_unigram(UnigramSettings(vocab_size=45, seed_min_count=1, seed_size=500), texts=[TEXT])


def test_em_never_lowers_the_likelihood(timeline):
    for r in timeline.rounds:
        lls = r.em_log_likelihood
        assert len(lls) == 3 and lls[-1] == r.log_likelihood
        assert all(b >= a - 1e-9 * abs(a) for a, b in zip(lls, lls[1:])), r.index
    assert timeline.rounds[0].em_log_likelihood[-1] > timeline.rounds[0].em_log_likelihood[0]


def test_schedule_and_single_characters(timeline):
    chars = {c for c in TEXT if not c.isspace()} | {"\u2581"}
    sizes = [r.vocab_size for r in timeline.rounds]
    assert sizes[0] == 1 + timeline.seed_size and sizes[-1] == 45
    assert timeline.seed_size == 241  # every distinct substring of the 18 words (seed_size 500 is a cap)
    for a, b in zip(sizes, sizes[1:]):
        keep = int((a - 1) * 0.75)
        assert b - 1 == (44 if keep < 44 * 1.1 else max(44, keep))
    for r in timeline.rounds:
        assert chars <= set(r.pieces)
        assert all(len(p.piece) > 1 for p in r.pruned)
        assert r.vocab_size == 1 + len(r.pieces) and len(r.scores) == len(r.pieces)
        assert list(r.scores) == sorted(r.scores, reverse=True)
    assert timeline.finished


def test_viterbi_tokens_agree_with_the_tokenizer(timeline):
    """The batched Viterbi of training and the per-word Viterbi of the tokenizer segment every
    word identically (same quantized scores, same tie rule)."""
    tok = timeline.tokenizer()
    counts = count_chunks([TEXT], parse_split("whitespace"))
    for k, r in enumerate(timeline.rounds):
        assert r.viterbi_tokens == sum(n * len(tok.encode_ids(w, step=k)) for w, n in counts.items())


def test_pruning_loss_recomputed_independently(timeline):
    """Recompute SentencePiece's loss for every piece of round k-1 with the tokenizer alone:
    freq from the Viterbi segmentation of each word, alt(x) = the best segmentation of x's
    string other than x itself (n-best on the raw piece string), then
    loss = freq(x) * (log(freq(x)/F) - sum over y in alt of log((freq(y) + freq(x)) / (F + freq(x) (|alt| - 1)))).
    The pruned pieces must be the ones with the smallest loss, in (loss, score, piece) order."""
    tok = timeline.tokenizer()
    raw = UnigramTokenizer(tok.pieces, tok.scores, parse_split("none"), word_prefix=None)
    counts = count_chunks([TEXT], parse_split("whitespace"))
    for k in range(1, timeline.n_rounds):
        prev, r = timeline.rounds[k - 1], timeline.rounds[k]
        freq = dict.fromkeys(prev.pieces, 0)
        for w, n in counts.items():
            for i in tok.encode_ids(w, step=k - 1):
                freq[tok.token_str(i)] += n
        total = sum(freq.values())
        score = dict(zip(prev.pieces, prev.scores))
        loss = {}
        for x in prev.pieces:
            if len(x) < 2:
                continue
            if freq[x] == 0:
                loss[x] = 0.0
                continue
            alt = next(s.pieces for s in raw.nbest(x, 3, step=k - 1) if s.pieces != (x,))
            fx = freq[x]
            logsum_alt = math.log(total + fx * (len(alt) - 1))
            lp_alt = sum(math.log(freq[y] + fx) - logsum_alt for y in alt)
            loss[x] = fx * (math.log(fx) - math.log(total) - lp_alt)
        pruned = {p.piece for p in r.pruned}
        kept = [x for x in loss if x not in pruned]
        assert len(pruned) == len(r.pruned) and pruned <= set(loss)
        # the pruned pieces have the smallest losses (up to rounding: the sums run in another order)
        assert not kept or max(loss[x] for x in pruned) <= min(loss[x] for x in kept) + 1e-9
        keys = [(p.loss, p.score, p.piece) for p in r.pruned]
        assert keys == sorted(keys)
        for p in r.pruned:
            assert p.loss == pytest.approx(loss[p.piece], rel=1e-9, abs=1e-9)
            assert p.freq == freq[p.piece] and p.score == score[p.piece]
            if p.freq:
                assert p.alternative == next(s.pieces for s in raw.nbest(p.piece, 3, step=k - 1) if s.pieces != (p.piece,))


# -- settings, stages, files ----------------------------------------------------------------------


def test_vocab_too_small_and_settings_errors():
    with pytest.raises(SettingsError, match="choose a size of at least 4"):
        UnigramTraining(UnigramSettings(vocab_size=3), texts=["abab ba"]).prepare()  # [UNK] ▁ a b
    assert set(train_unigram(UnigramSettings(vocab_size=4), texts=["abab ba"]).rounds[-1].pieces) == {"\u2581", "a", "b"}
    for bad, message in [
        (UnigramSettings(prune_fraction=1.0), "between 0 and 1"),
        (UnigramSettings(word_prefix="__"), "one character"),
        (UnigramSettings(em_iterations=0), "EM iterations"),
        (UnigramSettings(max_piece_chars=65), "between 1 and 64"),  # a settings file cannot make the seed huge
        (UnigramSettings(special_tokens=("x", "x")), "distinct"),
    ]:
        with pytest.raises(SettingsError, match=message):
            bad.validate()
    with pytest.raises(CorpusError):
        UnigramTraining(UnigramSettings(), texts=[" \n "]).prepare()


def test_stages_budget_and_table_input():
    training = UnigramTraining(UnigramSettings(vocab_size=30, seed_min_count=1, seed_size=120), table={"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5})
    tl = training.prepare()
    assert tl.rounds == [] and tl.seed_size <= 120 and tl.n_chunks == 5 and tl.corpus_length == 36 * 3 + 5
    rounds = list(training.steps())
    assert tl.finished and tl.rounds == rounds and len(rounds) == training.budget
    assert [r.index for r in rounds] == list(range(len(rounds)))
    assert rounds[-1].vocab_size == 30
    # the same grid as the BPE timeline: steps, length_at, token_bytes
    assert tl.steps is tl.rounds and tl.n_steps == len(rounds)
    assert [tl.length_at(k) for k in range(tl.n_steps)] == [r.viterbi_tokens for r in rounds]
    assert tl.token_bytes()[0] == b"[UNK]" and len(tl.token_bytes()) == 1 + len(tl.pieces())
    assert tl.vocab_size_at(0) == rounds[0].vocab_size


def test_json_round_trip(timeline):
    d = json.loads(json.dumps(to_json(timeline)))
    assert d["format"] == "tokviz-unigram" and d["version"] == 1
    back = from_json(d)
    assert back.rounds == timeline.rounds and back.settings == timeline.settings
    assert back.pieces() == timeline.pieces()
    a, b = back.tokenizer(), timeline.tokenizer()
    for step in (0, 1, None):
        assert a.encode_ids(TEXT, step=step) == b.encode_ids(TEXT, step=step)


def test_json_errors_are_clear(timeline):
    d = to_json(timeline)
    with pytest.raises(ModelFormatError, match="newer"):
        from_json({**d, "version": 2})
    with pytest.raises(ModelFormatError, match="tokviz-unigram"):
        from_json({**d, "format": "tokviz-wordpiece"})
    bad = json.loads(json.dumps(d))
    bad["rounds"]["rows"][1][4][0][0] = 10**6
    with pytest.raises(ModelFormatError, match="round 1"):
        from_json(bad)
    bad = json.loads(json.dumps(d))
    bad["pieces"][-1], bad["pieces"][2] = bad["pieces"][2], bad["pieces"][-1]
    with pytest.raises(ModelFormatError, match="pruning order"):
        from_json(bad)
    bad = json.loads(json.dumps(d))
    bad["rounds"]["rows"][1][5].append(bad["rounds"]["rows"][1][5][-1])  # a piece more than round 0 left it
    with pytest.raises(ModelFormatError, match="round 1's pieces and pruned pieces do not add up"):
        from_json(bad)


def _set(d: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        d = d[key]
    d[path[-1]] = value


@pytest.mark.parametrize(("path", "value", "message"), [
    (("rounds", "rows", 1, 5, 0), True, "round 1 is malformed"),
    (("rounds", "rows", 1, 5, 0), -1.5, "round 1 is malformed"),
    (("rounds", "rows", 1, 5, 0), -(2**64), "round 1 is malformed"),
    (("rounds", "rows", 0, 2, 0), "x", "round 0 is malformed"),
    (("rounds", "rows", 0, 2, 0), float("inf"), "round 0 is malformed"),
    (("rounds", "rows", 1, 4, 0, 1), float("nan"), "round 1 has a malformed pruned piece"),
    (("rounds", "rows", 1, 4, 0, 2), -1, "round 1 has a malformed pruned piece"),
    (("rounds", "rows", 1, 4, 0, 3), 0.5, "round 1 has a malformed pruned piece"),
    (("rounds", "rows", 1, 4, 0, 0), 0, "round 1 has a malformed pruned piece"),  # [UNK]'s id
    (("rounds", "rows", 1, 4, 0, 4), [10**6], "round 1 has a malformed pruned piece"),
    (("rounds", "rows", 1, 4, 0, 4), "ab", "round 1 has a malformed pruned piece"),
    (("rounds", "rows", 1, 4, 0), [1, 2.0, 3, 4], "round 1 has a malformed pruned piece"),
    (("pieces", 0), 5, "non-empty strings"),
    (("pieces", 0), "", "non-empty strings"),
])
def test_json_fields_are_checked(timeline, path, value, message):
    d = json.loads(json.dumps(to_json(timeline)))
    assert d["rounds"]["rows"][1][4] and d["rounds"]["rows"][0][2]  # round 1 pruned pieces; round 0 ran EM
    _set(d, path, value)
    with pytest.raises(ModelFormatError, match=message):
        from_json(d)


def test_docstring_examples():
    result = doctest.testmod(unigram_module)
    assert result.attempted > 0 and result.failed == 0


def test_scores_are_quantized_log_probabilities(timeline):
    r = timeline.rounds[-1]
    total = sum(math.exp(s / SCORE_SCALE) for s in r.scores)
    assert total == pytest.approx(1.0, abs=1e-4)
    assert r.top(3)[0] == (r.pieces[0], pytest.approx(math.exp(r.scores[0] / SCORE_SCALE)))


def test_scores_in_id_order_match_the_plain_lookup(timeline):
    pieces = timeline.pieces()
    expected = []
    for r in timeline.rounds:  # the plain way: each round's piece -> score, read in id order
        by_piece = dict(zip(r.pieces, r.scores))
        expected.append([by_piece[p] for p in pieces[: r.n_pieces]])
    assert len(expected) > 1
    assert timeline.scores_by_round() == expected
    assert [timeline.scores(k) for k in range(timeline.n_rounds)] == expected
    assert timeline.scores() == expected[-1]
    assert all(type(s) is int for s in expected[0])


def test_chunks_longer_than_the_limit_are_left_out():
    from tokviz.core.unigram.timeline import MAX_TRAIN_CHUNK_CHARS

    long_word = "xy" * MAX_TRAIN_CHUNK_CHARS
    tl = train_unigram(UnigramSettings(vocab_size=6, seed_min_count=1), texts=[long_word + " ab ab"])
    assert tl.n_chunks == 1 and set(tl.rounds[-1].pieces) <= {"\u2581", "a", "b", "\u2581a", "ab", "\u2581ab"}
    assert tl.tokenizer().encode("xy").ids == [tl.tokenizer().encode("x").ids[0], 0, 0]  # ▁ [UNK] [UNK]
    with pytest.raises(CorpusError, match="longer than 4096"):
        train_unigram(UnigramSettings(split="none"), texts=[long_word])


def test_cancel_is_checked_inside_a_round():
    """The GUI's cancel must not wait for a whole round: `should_stop` is polled within rounds."""
    from tokviz.core import Cancelled
    from tokviz.core.unigram.timeline import UnigramSettings, UnigramTraining

    text = " ".join(f"w{i % 97}x{i % 13} lower lowest newer" for i in range(3000))
    calls = {"n": 0, "armed": False}

    def should_stop() -> bool:
        calls["n"] += 1
        return calls["armed"]

    training = UnigramTraining(UnigramSettings(vocab_size=120), texts=[text])
    training.prepare(should_stop=should_stop)
    steps = training.steps()
    next(steps)  # round 0 completes
    calls["armed"] = True
    before = calls["n"]
    with pytest.raises(Cancelled):
        next(steps)
    assert calls["n"] == before + 1  # stopped at the first check of round 1
    assert len(training.timeline.rounds) == 1
