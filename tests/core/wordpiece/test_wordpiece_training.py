"""WordPiece training: hand-worked scores, exact ties, the slow reference on real corpora,
budgets, stages and model files."""

from __future__ import annotations

import doctest
import json
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokviz.core.wordpiece.timeline as wordpiece_module
import tokviz.core.wordpiece.trainer as wordpiece_train_module
from tokviz.core import CorpusError, ModelFormatError, SettingsError, Training, TrainSettings, count_chunks, parse_split
from tokviz.core.wordpiece import reference
from tokviz.core.wordpiece.corpus import base_symbols, initial_counts, initial_counts_slow
from tokviz.core.wordpiece.lazy_heaps import drop_stale, group_key_for, score_shift
from tokviz.core.wordpiece.timeline import (
    WordPieceSettings,
    WordPieceTrainer,
    WordPieceTraining,
    from_json,
    to_json,
    train_wordpiece,
)
from tokviz.core.wordpiece.word_merge import merge_many, merge_one

HYPOTHESIS = settings(max_examples=150, deadline=None, database=None)

# The Hugging Face course corpus: hug x10, pug x5, pun x12, bun x4, hugs x5.
COURSE = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
COURSE_TEXT = " ".join(w for w, n in COURSE.items() for _ in range(n))


def named(timeline):
    forms = timeline.token_forms()
    return [(forms[s.pair[0]], forms[s.pair[1]], s.text) for s in timeline.steps]


def test_course_corpus_known_answer():
    """Worked by hand. Token counts: h 15, p 17, b 4, ##u 36, ##g 20, ##n 16, ##s 5.

    Pair counts and scores count(ab) / (count(a) count(b)):
      (h, ##u) 15/(15*36) = 1/36   (##u, ##g) 20/(36*20) = 1/36   (p, ##u) 17/(17*36) = 1/36
      (##u, ##n) 16/(36*16) = 1/36 (b, ##u) 4/(4*36) = 1/36       (##g, ##s) 5/(20*5) = 1/20
    so the rare-but-cohesive (##g, ##s) wins although (##u, ##g) is four times as frequent (BPE
    takes (u, g) first). Step 1: every pair scores 1/36 again (##g is now 15: (##u, ##g)
    15/(36*15)); the first occurrence decides: (h, ##u) at the start of "hug". Step 2: (hu, ##gs)
    = 5/(15*5) = 1/15 beats (hu, ##g) = 10/(15*15) = 2/45 and (p, ##u) = 17/(17*21) = 1/21.
    """
    tl = train_wordpiece(WordPieceSettings(merges=3), texts=[COURSE_TEXT])
    assert tl.symbols == ("b", "h", "p", "##g", "##n", "##s", "##u")
    assert named(tl) == [("##g", "##s", "##gs"), ("h", "##u", "hu"), ("hu", "##gs", "hugs")]
    s0, s1, s2 = tl.steps
    assert (s0.count, s0.left_count, s0.right_count, s0.exact_score) == (5, 20, 5, Fraction(1, 20))
    assert (s1.count, s1.left_count, s1.right_count, s1.exact_score) == (15, 15, 36, Fraction(1, 36))
    assert (s2.count, s2.left_count, s2.right_count, s2.exact_score) == (5, 15, 5, Fraction(1, 15))
    assert s0.score == pytest.approx(0.05)
    forms = tl.token_forms()
    # the candidates table: scores next to raw counts; ties in first-occurrence order
    cands = [(forms[c.pair[0]] + " " + forms[c.pair[1]], c.count, c.left_count, c.right_count, c.first_chunk, c.first_offset)
             for c in s0.candidates]
    assert cands == [
        ("##g ##s", 5, 20, 5, 4, 2),
        ("h ##u", 15, 15, 36, 0, 0),
        ("##u ##g", 20, 36, 20, 0, 1),
        ("p ##u", 17, 17, 36, 1, 0),
        ("##u ##n", 16, 36, 16, 2, 1),
    ]
    # corpus length in tokens: 36 words x 3 characters + 5 x 1 more, minus the merged sites
    assert tl.corpus_length == 36 * 3 + 5
    assert [s.length for s in tl.steps] == [113 - 5, 108 - 15, 93 - 5]
    bpe = Training(TrainSettings(units="chars", split="whitespace", merges=1), texts=[COURSE_TEXT]).run()
    assert bpe.token_bytes()[-2] == b"ug"  # BPE's first merge: the most frequent pair


def test_rare_but_cohesive_beats_frequent():
    """"th" occurs 60 times, but t and h also occur apart: score 60/(100*90) = 1/150.
    "zq" occurs twice and z, q never occur otherwise: score 2/(2*2) = 1/2."""
    text = "the " * 60 + "tea " * 40 + "oh " * 30 + "zq " * 2
    tl = train_wordpiece(WordPieceSettings(merges=1), texts=[text])
    (step,) = tl.steps
    assert step.text == "zq"
    assert (step.count, step.left_count, step.right_count) == (2, 2, 2)
    best_th = [c for c in step.candidates if tl.token_forms()[c.pair[0]] == "t"]
    assert best_th and max(c.count for c in best_th) >= 40
    assert step.score > max(c.score for c in best_th)


def test_overlapping_pairs_merge_left_to_right():
    """"xaaaa" once and "x" ten times: (x, ##a) = 1/(11*4) = 1/44, while (##a, ##a) occurs 3 times
    (naive count: positions 1-2, 2-3, 3-4) = 3/(4*4) = 3/16 and wins; merging left to right
    replaces two sites: x ##aa ##aa."""
    trainer = WordPieceTrainer(["xaaaa", "x"], [1, 10])
    step = next(trainer.steps(max_merges=1))
    assert step.text == "##aa" and (step.count, step.left_count, step.right_count) == (3, 4, 4)
    assert trainer.symbols == ["x", "##a"] and trainer.segments(0) == [0, step.id, step.id]
    assert step.length == 15 - 2


def test_min_count_stops_training():
    """abc x3, abd x1: (a, ##b), (##b, ##c), (##b, ##d) all score 1/4; (##b, ##d) occurs once.
    With min_count 3: a+##b (first occurrence wins the tie), then ab+##c (3/(4*3)); then no
    pair occurs 3 times."""
    tl = train_wordpiece(WordPieceSettings(min_count=3), texts=["abc abc abc abd"])
    assert tl.finished
    assert [(s.text, s.count) for s in tl.steps] == [("ab", 4), ("abc", 3)]


# -- against the slow reference -----------------------------------------------------------------


# The slow reference is `tokviz.core.wordpiece.reference.train`: every step recounts everything.


def assert_matches_oracle(counts, merges, min_count=1):
    trainer = WordPieceTrainer(list(counts), list(counts.values()), min_count=min_count)
    got = list(trainer.steps(max_merges=merges))
    ref = reference.train(counts, max_merges=merges, min_count=min_count)
    assert len(got) == len(ref)
    forms = trainer.forms
    for g, r in zip(got, ref):
        assert (forms[g.pair[0]], forms[g.pair[1]]) == r.pair, g.rank
        assert (g.text, g.exact_score, g.count, g.left_count, g.right_count, g.length) == (
            r.token, r.score, r.count, r.left_count, r.right_count, r.length)
        cands = [((forms[c.pair[0]], forms[c.pair[1]]), Fraction(c.count, c.left_count * c.right_count),
                  c.count, c.left_count, c.right_count, c.first_chunk, c.first_offset) for c in g.candidates]
        assert cands == [tuple(c) for c in r.candidates], g.rank
    return got


@pytest.mark.parametrize(
    ("name", "chars", "split", "merges"),
    [
        ("tinyshakespeare.txt", 5000, "whitespace", 200),
        ("taylorswift.txt", 4000, "whitespace", 200),
        ("udhr2_all.txt", 3000, "gpt2", 150),
    ],
)
def test_matches_slow_reference_on_real_text(corpus_text, name, chars, split, merges):
    counts = count_chunks([corpus_text(name, chars)], parse_split(split))
    got = assert_matches_oracle(counts, merges)
    assert len(got) == merges


words = st.lists(st.text(alphabet="abcd", min_size=1, max_size=7), min_size=1, max_size=12)


@HYPOTHESIS
@given(words=words, weights=st.lists(st.integers(1, 5), min_size=12, max_size=12), min_count=st.integers(1, 3))
def test_matches_slow_reference_random(words, weights, min_count):
    counts: dict[str, int] = {}
    for w, n in zip(words, weights):
        counts[w] = counts.get(w, 0) + n
    assert_matches_oracle(counts, 60, min_count)


@HYPOTHESIS
@given(words=words, weights=st.lists(st.integers(1, 5), min_size=12, max_size=12))
def test_compacting_every_heap_all_the_time_changes_nothing(words, weights):
    """Dropping stale heap entries (normally once a heap doubles past 64) at every push still
    gives the slow reference's merges and candidates."""
    counts: dict[str, int] = {}
    for w, n in zip(words, weights):
        counts[w] = counts.get(w, 0) + n
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wordpiece_train_module, "MIN_COMPACT", 0)
        assert_matches_oracle(counts, 60)


def test_compaction_runs_and_drops_only_stale_entries(corpus_text, monkeypatch):
    counts = count_chunks([corpus_text("tinyshakespeare.txt", 20_000)], parse_split("whitespace"))
    trainer = WordPieceTrainer(list(counts), list(counts.values()))
    kept: dict[bool, list[int]] = {True: [], False: []}  # entries left by each compaction, of groups / the heap

    def counted(heap, pinned):
        left = drop_stale(heap, pinned)
        kept[pinned is trainer.pinned].append(left)
        return left

    monkeypatch.setattr(wordpiece_train_module, "drop_stale", counted)
    steps = list(trainer.steps(max_merges=400))
    monkeypatch.undo()
    assert kept[True] and kept[False]  # groups and the global heap were both compacted
    live = {id(e) for e in trainer.pinned.values()}
    bound = 2 * max(kept[True]) + wordpiece_train_module.MIN_COMPACT  # a group compacts past twice its last size
    for group in trainer.groups.values():
        assert len(group) <= bound and all(isinstance(e, tuple) for e in group)
    assert sum(id(e) in live for g in trainer.groups.values() for e in g) == len(trainer.pinned)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wordpiece_train_module, "MIN_COMPACT", 10**9)  # never compact
        ref = WordPieceTrainer(list(counts), list(counts.values()))
        assert [(s.pair, s.count, s.candidates) for s in ref.steps(max_merges=400)] == [
            (s.pair, s.count, s.candidates) for s in steps]


@HYPOTHESIS
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**6),
       st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**6))
def test_integer_score_keys_order_exactly(c1, x1, y1, c2, x2, y2):
    """The heap keys c * 2**K // (x * y) order the fractions exactly (equal iff equal)."""
    k = score_shift(WordPieceTrainer(["ab"], [10**6]).length)
    key1, key2 = (c1 << k) // (x1 * y1), (c2 << k) // (x2 * y2)
    f1, f2 = Fraction(c1, x1 * y1), Fraction(c2, x2 * y2)
    assert (key1 < key2) == (f1 < f2) and (key1 == key2) == (f1 == f2)


@HYPOTHESIS
@given(st.integers(1, 2**26 - 1), st.integers(1, 2**26 - 1), st.integers(1, 2**26 - 1), st.integers(1, 2**26 - 1),
       st.booleans())
def test_group_keys_order_exactly(c1, x1, c2, x2, small):
    """The keys inside a group order count(ab) / count(a) exactly (equal iff equal): floats below
    a corpus length of 2**26 (counts at most that, count(ab) <= count(a)), shifted integers
    beyond (a longer corpus)."""
    if small:
        c1, x1, c2, x2 = (v % 1000 + 1 for v in (c1, x1, c2, x2))  # near fractions, many equal
    (c1, x1), (c2, x2) = sorted((c1, x1)), sorted((c2, x2))
    f1, f2 = Fraction(c1, x1), Fraction(c2, x2)
    for length in (2**26 - 1, 2**26):
        key = group_key_for(length)
        assert isinstance(key(1, 3), float) == (length < 2**26)
        key1, key2 = key(c1, x1), key(c2, x2)
        assert (key1 < key2) == (f1 < f2) and (key1 == key2) == (f1 == f2)


def test_float_group_keys_keep_the_nearest_fractions_apart():
    """Fractions with denominators just under 2**26 rounded to floats keep their exact order."""
    rng = random.Random(1)
    key = group_key_for(2**26 - 2)
    for _ in range(5000):
        (q1, q2), t = (rng.randint(2**26 - 3000, 2**26 - 1) for _ in range(2)), rng.random()
        p1, p2 = max(1, round(t * q1)), max(1, round(t * q2))
        f1, f2 = Fraction(p1, q1), Fraction(p2, q2)
        assert (key(p1, q1) < key(p2, q2)) == (f1 < f2) and (key(p1, q1) == key(p2, q2)) == (f1 == f2)


@HYPOTHESIS
@given(words=st.lists(st.text(alphabet="ab\u00e9\U0001f600", min_size=1, max_size=6), min_size=1, max_size=10,
                     unique=True),
       weights=st.lists(st.integers(1, 2**40), min_size=10, max_size=10), drop=st.booleans())
def test_initial_counts_equal_the_plain_loop(words, weights, drop):
    """The numpy counting of the unmerged corpus equals the loop over every character: ids,
    symbol counts, pair counts in order of first occurrence, the words of each pair; and the
    same error for a character missing from the symbols."""
    weights = weights[: len(words)]
    symbols = base_symbols(words)
    if drop:
        symbols = symbols[1:]
    index = {s: i for i, s in enumerate(symbols)}
    try:
        slow = initial_counts_slow(words, weights, index)
    except ValueError as exc:
        with pytest.raises(ValueError, match="missing from the base symbols") as fast:
            initial_counts(words, weights, index)
        assert str(fast.value) == str(exc)
        return
    fast = initial_counts(words, weights, index)
    assert fast.words == slow.words and fast.tok_count == slow.tok_count
    assert list(fast.pair_count.items()) == list(slow.pair_count.items())
    assert list(fast.pair_words.items()) == list(slow.pair_words.items())


@HYPOTHESIS
@given(seq=st.lists(st.integers(0, 3), min_size=2, max_size=8), data=st.data())
def test_merging_one_site_equals_the_general_merge(seq, data):
    """The one-site merge (the usual case, written out) gives the general merge's word and
    count changes (zero changes left out)."""
    i = data.draw(st.integers(0, len(seq) - 2))
    k = (seq[i] << 32) | seq[i + 1]
    out, delta = merge_one(seq, i, k, 9)
    ref_out, ref_delta = merge_many(seq, [i], 9)
    assert out == ref_out == seq[:i] + [9] + seq[i + 2:]
    assert {x: d for x, d in delta.items() if d} == {x: d for x, d in ref_delta.items() if d}


# -- budgets, stages, input kinds ----------------------------------------------------------------


def test_vocab_size_counts_unk_specials_base_and_merges():
    s = WordPieceSettings(vocab_size=12, special_tokens=("<s>",))
    tl = train_wordpiece(s, texts=[COURSE_TEXT])
    assert tl.vocab_size == 12 and len(tl.steps) == 12 - 2 - 7
    assert tl.token_forms()[:3] == ["[UNK]", "<s>", "b"]
    assert tl.steps[0].id == 2 + 7 and tl.steps[0].pair[0] >= 2
    with pytest.raises(SettingsError, match="at least 8"):
        WordPieceTraining(WordPieceSettings(vocab_size=7), texts=[COURSE_TEXT]).prepare()
    assert train_wordpiece(WordPieceSettings(vocab_size=8), texts=[COURSE_TEXT]).steps == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (WordPieceSettings(vocab_size=10, merges=3), "either"),
        (WordPieceSettings(min_count=0), "minimum count"),
        (WordPieceSettings(max_word_chars=0), "maximum word length"),
        (WordPieceSettings(special_tokens=("[UNK]",)), "always id 0"),
        (WordPieceSettings(split="nope"), "unknown split"),
    ],
)
def test_settings_errors_say_what_to_do(settings, message):
    with pytest.raises(Exception, match=message):
        settings.validate()


def test_stages_and_word_count_table():
    training = WordPieceTraining(WordPieceSettings(merges=5), table=COURSE)
    tl = training.prepare()
    assert tl.steps == [] and tl.n_chunks == 5 and training.budget == 5
    seen = list(training.steps())
    assert tl.finished and tl.steps == seen
    from_text = train_wordpiece(WordPieceSettings(merges=5), texts=[COURSE_TEXT])
    assert [s.text for s in seen] == [s.text for s in from_text.steps]
    assert tl.length_at(0) == 113 and tl.length_at(5) == seen[-1].length
    assert tl.n_steps == 5 and tl.token_bytes()[0] == b"[UNK]" and tl.token_bytes()[-1] == seen[-1].token
    with pytest.raises(CorpusError):
        WordPieceTraining(WordPieceSettings(), texts=["   "]).prepare()


def test_runs_until_no_pair_is_left():
    tl = train_wordpiece(WordPieceSettings(), texts=[COURSE_TEXT])
    tok = tl.tokenizer()
    assert tl.finished
    # every word is one piece at the end
    assert [tok.token_str(i) for i in tok.encode_ids("hug pug pun bun hugs")] == ["hug", "pug", "pun", "bun", "hugs"]


# -- model files ----------------------------------------------------------------------------------


def test_json_round_trip():
    tl = train_wordpiece(WordPieceSettings(merges=20, special_tokens=("<eos>",)), texts=[COURSE_TEXT * 2 + " xyz"])
    d = json.loads(json.dumps(to_json(tl)))
    assert d["format"] == "tokviz-wordpiece" and d["version"] == 1
    back = from_json(d)
    assert back.steps == tl.steps and back.symbols == tl.symbols and back.settings == tl.settings
    assert back.tokenizer().encode("hugs xyz").ids == tl.tokenizer().encode("hugs xyz").ids


def test_json_errors_are_clear():
    d = to_json(train_wordpiece(WordPieceSettings(merges=3), texts=[COURSE_TEXT]))
    with pytest.raises(ModelFormatError, match="newer"):
        from_json({**d, "version": 99})
    with pytest.raises(ModelFormatError, match="not a tokviz-wordpiece model"):
        from_json({"format": "tokviz-model"})
    bad = json.loads(json.dumps(d))
    bad["steps"]["rows"][0][0] = 999
    with pytest.raises(ModelFormatError, match="step 0"):
        from_json(bad)
    bad = json.loads(json.dumps(d))
    del bad["symbols"]
    with pytest.raises(ModelFormatError, match="symbols"):
        from_json(bad)


def test_docstring_examples():
    for module in (wordpiece_module, wordpiece_train_module):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0


def test_words_longer_than_the_limit_are_left_out():
    tl = train_wordpiece(WordPieceSettings(max_word_chars=5), texts=["abcdefgh xy xy xyz"])
    assert tl.n_chunks == 2 and tl.symbols == ("x", "##y", "##z")
    assert tl.tokenizer().encode_ids("abcdefgh") == [0]
    with pytest.raises(CorpusError, match="longer than 100 characters; choose a split"):
        train_wordpiece(WordPieceSettings(split="none"), texts=["ab " * 40])
