"""BPE-dropout: the fast loops equal the readable reference draw for draw, p = 0 is the
deterministic encode, p = 1 the starting symbols, every sample decodes back to its text, and the
distribution of a word's segmentations is tokenizers' own."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import shared_file
from tokviz.core.bpe.dropout.byte_rank import dropout_parts
from tokviz.core.bpe.dropout.pair_rank import dropout_merge
from tokviz.core.bpe.dropout.reference import dropout_encode_reference, dropout_merge_reference, dropout_parts_reference
from tokviz.core.bpe.pair_merge import PairMerges, pair_key
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.bpe.timeline import TrainSettings
from tokviz.core.errors import EncodeError
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.loading import load_tokenizer
from tokviz.core.registry import make_training

CORPUS = ("the quick brown fox jumps over the lazy dog; unbelievable tokenization of the thing "
          "thinks thrice, café naïve Größe 東京 👋🏽 ") * 8
TEXTS = st.text(st.sampled_from("the quick brown fox unbelievable café 東京👋 \n\t,.!"), max_size=60)
RATES = st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0])
SEEDS = st.integers(0, 2**32)


@pytest.fixture(scope="module")
def trained():
    return make_training(TrainSettings(merges=120), texts=[CORPUS]).run().tokenizer()


@pytest.fixture(scope="module")
def minbpe(tmp_path_factory):
    # minbpe's known model: "aaabdaaabac" with 3 merges -> [258, 100, 258, 97, 99]
    path = tmp_path_factory.mktemp("minbpe") / "toy.model"
    path.write_text("minbpe v1\n\n0\n97 97\n256 97\n257 98\n", encoding="utf-8")
    return load_tokenizer(path)


@pytest.fixture(scope="module")
def ranked(trained):
    """A tiktoken-rule tokenizer whose ranks are the trained model's tokens (ranks = ids)."""
    return RankBpeTokenizer({trained.token_bytes(i): i for i in range(trained.n_vocab)},
                            pattern=r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


@pytest.fixture(scope="module")
def gpt2_json():
    return json.loads(shared_file("vocab", "hf", "gpt2", "tokenizer.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def gpt2(gpt2_json):
    return HfTokenizer.from_json(gpt2_json)


def _tokenizers(request):
    return [request.getfixturevalue(name) for name in ("trained", "minbpe", "ranked")]


# -- the reference --------------------------------------------------------------------------


def test_reference_known_answers():
    merges = {(97, 97): 256, (256, 97): 257, (257, 98): 258}  # minbpe's known model
    ids = list(b"aaabdaaabac")
    assert dropout_encode_reference(ids, merges, 0.0, random.Random(1)) == [258, 100, 258, 97, 99]
    assert dropout_encode_reference(ids, merges, 1.0, random.Random(1)) == ids


class Script(random.Random):
    """A generator whose draws are given: 0.0 skips a candidate, 0.99 keeps it (p = 0.5)."""

    def __init__(self, draws):
        super().__init__(0)
        self.draws = list(draws)

    def random(self):
        return self.draws.pop(0)


def test_a_skipped_candidate_comes_back_after_the_next_one_kept():
    # "abc" with (a, b) rank 0 and (b, c) rank 1: skipping (a, b) lets (b, c) join first, and
    # (a, b) is stale once it comes back
    merges = {(1, 2): 10, (2, 3): 11}
    assert dropout_encode_reference([1, 2, 3], merges, 0.5, Script([0.0, 0.99, 0.99])) == [1, 11]
    assert dropout_encode_reference([1, 2, 3], merges, 0.5, Script([0.99, 0.99])) == [10, 3]  # the stale (b, c) draws too


# -- fast loops equal the reference -----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(0, 5), max_size=40), p=RATES, seed=SEEDS)
def test_pair_rank_loop_equals_the_reference(ids, p, seed):
    # a dense merge list over 6 symbols: many candidates, many stale ones
    merges = [(a, b) for a in range(6) for b in range(6) if (a * 7 + b * 3) % 4]
    rank_of = {pair_key(a, b): r for r, (a, b) in enumerate(merges)}
    pairs = PairMerges(rank_of, [6 + r for r in range(len(merges))])
    limit = len(merges) - 3
    got = dropout_merge(pairs, ids, p, random.Random(seed), limit)

    def rank(a, b):
        r = rank_of.get(pair_key(a, b))
        return r if r is not None and r < limit else None

    expected = dropout_merge_reference(list(ids), rank, lambda a, b: 6 + rank(a, b), p, random.Random(seed))
    assert got == expected


@settings(max_examples=60, deadline=None)
@given(text=TEXTS, p=RATES, seed=SEEDS)
def test_byte_rank_loop_equals_the_reference(ranked, text, p, seed):
    enc = ranked.mergeable_ranks
    piece = text.encode()
    bounds = dropout_parts(enc, piece, p, random.Random(seed), 300)
    parts = [piece[a:b] for a, b in pairwise(bounds)]
    assert parts == dropout_parts_reference(piece, enc, p, random.Random(seed), 300)


# -- tokenizers --------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, seed=SEEDS)
def test_dropout_zero_is_the_deterministic_encode(request, gpt2, text, seed):
    for tok in [*_tokenizers(request), gpt2]:
        assert tok.encode_dropout(text, dropout=0.0, seed=seed).ids == tok.encode_ordinary(text).ids


def test_dropout_below_one_in_a_million_equals_the_deterministic_encode(trained, ranked, gpt2):
    for tok in (trained, ranked, gpt2):  # the dropout loops themselves, with (almost) no skip
        assert tok.encode_dropout(CORPUS, dropout=1e-9, seed=3).ids == tok.encode_ordinary(CORPUS).ids


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, p=RATES, seed=SEEDS)
def test_every_sample_decodes_back_to_its_text(request, gpt2, text, p, seed):
    for tok in [*_tokenizers(request), gpt2]:
        enc = tok.encode_dropout(text, dropout=p, seed=seed)
        assert tok.decode(enc.ids) == text
        assert b"".join(enc.tokens) == text.encode()
        assert len(enc.spans) == len(enc.ids)


def test_same_seed_same_ids_other_seeds_differ(request, gpt2):
    text = CORPUS + " aaabdaaabac" * 20  # words minbpe's toy model merges
    for tok in [*_tokenizers(request), gpt2]:
        a = tok.encode_dropout(text, dropout=0.5, seed=7).ids
        assert tok.encode_dropout(text, dropout=0.5, seed=7).ids == a
        assert tok.encode_dropout(text, dropout=0.5, seed=random.Random(7)).ids == a
        assert tok.encode_dropout(text, dropout=0.5, seed=8).ids != a


def test_dropout_one_gives_the_starting_symbols(trained, minbpe, ranked, gpt2):
    assert minbpe.encode_dropout("aaabdaaabac", dropout=1.0, seed=0).ids == list(b"aaabdaaabac")
    assert minbpe.encode_dropout("aaabdaaabac", dropout=0.0, seed=0).ids == [258, 100, 258, 97, 99]
    text = "unbelievable café 👋🏽"
    assert [len(t) for t in trained.encode_dropout(text, dropout=1.0, seed=0).tokens] == [1] * len(text.encode())
    assert ranked.encode_dropout(text, dropout=1.0, seed=0).ids == list(text.encode())  # ranks = bytes here
    assert gpt2.encode_dropout(" hello", dropout=1.0, seed=0).ids == [gpt2.model.vocab[c] for c in "Ġhello"]


def test_spans_of_a_sample_cover_their_characters(trained):
    text = "unbelievable café"
    enc = trained.encode_dropout(text, dropout=1.0, seed=0)
    assert enc.spans[:3] == [(0, 1), (1, 2), (2, 3)]
    assert enc.spans[-2:] == [(16, 17), (16, 17)]  # the two bytes of "é"


def test_dropout_outside_zero_to_one_and_non_bpe_models_are_refused(trained):
    for p in (-0.1, 1.5, float("nan"), True, "0.1"):
        with pytest.raises(EncodeError, match="from 0 to 1"):
            trained.encode_dropout("abc", dropout=p, seed=0)
    from tokviz.core.wordpiece.timeline import WordPieceSettings

    wp = make_training(WordPieceSettings(merges=5, min_count=1), texts=[CORPUS]).run().tokenizer()
    assert not wp.drops_merges and trained.drops_merges
    with pytest.raises(EncodeError, match="BPE models only"):
        wp.encode_dropout("abc", dropout=0.1, seed=0)


# -- against tokenizers --------------------------------------------------------------------------


def test_dropout_zero_equals_tokenizers(gpt2, gpt2_json):
    tokenizers = pytest.importorskip("tokenizers")
    d = dict(gpt2_json, model=dict(gpt2_json["model"], dropout=0.0))
    hf = tokenizers.Tokenizer.from_str(json.dumps(d))
    assert gpt2.encode_dropout(CORPUS, dropout=0.0, seed=0).ids == hf.encode(CORPUS).ids


@pytest.mark.parametrize("word", [" unbelievable", " internationalization"])
def test_segmentation_shares_match_tokenizers(gpt2, gpt2_json, word):
    tokenizers = pytest.importorskip("tokenizers")
    d = dict(gpt2_json, model=dict(gpt2_json["model"], dropout=0.1))
    hf = tokenizers.Tokenizer.from_str(json.dumps(d))
    n = 2000
    theirs = Counter(tuple(hf.encode(word).ids) for _ in range(n))
    rng = random.Random(0)
    ours = Counter(tuple(gpt2.encode_dropout(word, dropout=0.1, seed=rng).ids) for _ in range(n))
    assert len(ours) > 1  # it samples
    tv = sum(abs(theirs[k] - ours[k]) for k in theirs.keys() | ours.keys()) / (2 * n)
    assert tv < 0.05, (tv, theirs.most_common(4), ours.most_common(4))
