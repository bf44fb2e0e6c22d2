"""BPE-dropout for SentencePiece BPE models: sentencepiece's ``SampleEncode`` rule (a pair still on
the agenda is skipped for good with probability p, one draw per pair that is still there), the
same sample for a seed, p = 0 the deterministic encode, every sample decoding back, and the
distribution of a word's segmentations the library's own."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.formats.sentencepiece.spm_helpers import write_model
from tokviz.core.errors import EncodeError
from tokviz.core.explain.samples import sample_shares
from tokviz.core.loading import load_tokenizer

TEXT = "All human beings are born free and equal in dignity and rights. 人人生而自由 👋🏽"
TEXTS = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz éü東京👋 \n\t,.!"), max_size=60)
RATES = st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0])


@pytest.fixture(scope="module")
def bpe(tmp_path_factory):
    """The shared test BPE model: byte fallback, identity normalization, spaces kept."""
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    return load_tokenizer(trained_model("bpe-bytes", tmp_path_factory.mktemp("sp")))


class Script(random.Random):
    """A generator whose draws are given (0.0 skips a pair at p = 0.5, 0.9 keeps it), counting them."""

    def __init__(self, draws):
        super().__init__(0)
        self.draws = list(draws)
        self.used = 0

    def random(self):
        self.used += 1
        return self.draws.pop(0)


@pytest.fixture
def abc(tmp_path):
    # 'ab' scores best, then 'bc', then 'abc'
    pieces = [("<unk>", 0, "unknown"), ("a", -5, "normal"), ("b", -5, "normal"), ("c", -5, "normal"),
              ("ab", -1, "normal"), ("bc", -2, "normal"), ("abc", -3, "normal")]
    return load_tokenizer(write_model(tmp_path / "abc.model", pieces, trainer={"model_type": 2},
                                      normalizer={"name": "identity", "add_dummy_prefix": False}))


def test_a_skipped_pair_is_gone_for_good_and_stale_pairs_draw_nothing(abc):
    assert abc.drops_merges
    assert abc.encode_ordinary("abc").tokens == [b"abc"]
    # keep 'ab': 'bc' is then stale (no draw) and 'abc' is kept: two draws
    rng = Script([0.9, 0.9])
    assert abc.encode_dropout("abc", dropout=0.5, seed=rng).tokens == [b"abc"] and rng.used == 2
    # skip 'ab', keep 'bc', keep 'a'+'bc'
    rng = Script([0.0, 0.9, 0.9])
    assert abc.encode_dropout("abc", dropout=0.5, seed=rng).tokens == [b"abc"] and rng.used == 3
    # skip 'ab' and 'bc': nothing else was ever on the agenda, and 'ab' does not come back
    rng = Script([0.0, 0.0])
    assert abc.encode_dropout("abc", dropout=0.5, seed=rng).tokens == [b"a", b"b", b"c"] and rng.used == 2
    # skip 'ab', keep 'bc', skip 'abc': 'a' 'bc'
    rng = Script([0.0, 0.9, 0.0])
    assert abc.encode_dropout("abc", dropout=0.5, seed=rng).tokens == [b"a", b"bc"] and rng.used == 3


def test_dropout_one_gives_the_starting_symbols_without_drawing(abc, bpe):
    rng = Script([])
    assert abc.encode_dropout("abcab", dropout=1.0, seed=rng).tokens == [b"a", b"b", b"c", b"a", b"b"]
    enc = bpe.encode_dropout("free 人", dropout=1.0, seed=0)
    assert [bpe.token_text(i) for i in enc.ids] == ["▁", "f", "r", "e", "e", "▁", "人"]


def test_dropout_zero_is_the_deterministic_encode(bpe):
    lines = TEXT.split(" ") + [TEXT]
    for text in lines:
        assert bpe.encode_dropout(text, dropout=0.0, seed=1).ids == bpe.encode_ordinary(text).ids
        assert bpe.encode_dropout(text, dropout=1e-12, seed=1).ids == bpe.encode_ordinary(text).ids


def test_a_step_of_the_timeline_limits_the_merges_a_sample_may_make(bpe):
    assert bpe.encode_dropout(TEXT, dropout=0.3, seed=1, step=0).ids == bpe.encode_dropout(TEXT, dropout=1.0, step=0).ids
    assert bpe.encode_dropout(TEXT, dropout=0.0, seed=1, step=40).ids == bpe.encode_ordinary(TEXT, step=40).ids
    made = set(bpe.encode_dropout(TEXT, dropout=0.3, seed=1, step=40).ids)
    assert made <= set(bpe.encode_ordinary(TEXT, step=0).ids) | {bpe.merge_list()[k].id for k in range(40)}


def test_same_seed_same_ids_other_seeds_differ(bpe):
    a = bpe.encode_dropout(TEXT, dropout=0.3, seed=7)
    assert bpe.encode_dropout(TEXT, dropout=0.3, seed=7).ids == a.ids
    assert bpe.encode_dropout(TEXT, dropout=0.3, seed=random.Random(7)).ids == a.ids
    assert bpe.encode_dropout(TEXT, dropout=0.3, seed=8).ids != a.ids
    assert len(a.ids) > len(bpe.encode_ordinary(TEXT).ids)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, p=RATES, seed=st.integers(0, 2**32))
def test_every_sample_decodes_back_to_its_text(bpe, text, p, seed):
    enc = bpe.encode_dropout(text, dropout=p, seed=seed)
    assert bpe.decode(enc.ids) == text
    assert len(enc.spans) == len(enc.ids) == len(enc.tokens)
    assert all(0 <= a <= b <= len(text) for a, b in enc.spans) and enc.spans == sorted(enc.spans)


def test_a_unigram_model_refuses(tmp_path):
    pieces = [("<unk>", 0, "unknown"), ("a", -1, "normal"), ("ab", -1, "normal")]
    uni = load_tokenizer(write_model(tmp_path / "u.model", pieces))
    assert not uni.drops_merges
    with pytest.raises(EncodeError, match="BPE models only"):
        uni.encode_dropout("ab", dropout=0.1, seed=0)


def test_a_rate_outside_zero_to_one_is_refused(bpe):
    for p in (-0.1, 1.5, float("nan"), "0.1"):
        with pytest.raises(EncodeError, match="from 0 to 1"):
            bpe.encode_dropout("abc", dropout=p, seed=0)


def test_the_distribution_of_a_word_is_sentencepieces(bpe):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=bpe.source)
    spm.set_random_generator_seed(5)
    n, word = 4000, "Everyone"
    theirs = Counter(tuple(sp.encode(word, out_type=str, enable_sampling=True, alpha=0.3)) for _ in range(n))
    rng = random.Random(5)
    ours = Counter(tuple(bpe.token_text(i) for i in bpe.encode_dropout(word, dropout=0.3, seed=rng).ids)
                   for _ in range(n))
    assert len(theirs) > 5
    for seg in set(theirs) | set(ours):  # shares within 4 points (the difference's standard error: at most 1.2)
        assert abs(ours[seg] - theirs[seg]) / n < 0.04, seg


def test_the_samples_of_a_word_are_drawn_for_a_sentencepiece_bpe(bpe):
    shares = sample_shares("sp", bpe, "Everyone", n=200, dropout=0.3)
    assert shares is not None and shares.how == "BPE-dropout 0.3"
    assert sum(r.count for r in shares.rows) == 200 and len(shares.rows) > 1
