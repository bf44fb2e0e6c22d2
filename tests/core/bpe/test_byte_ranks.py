"""`tokviz.core.bpe.byte_ranks`: the numpy merge loop over many chunks equals the one-chunk loop (the
oracle) on arbitrary Unicode, arbitrary bytes and arbitrary vocabularies; its pair table."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_tokenizers import corpus, fresh_copy, load_ours, piece_ids, tiktoken_path, unicode_text
from tokviz.core.bpe.byte_ranks.merge_rounds import BatchMerger
from tokviz.core.bpe.byte_ranks.pair_table import PairTable
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.text.split import GPT2_SPLIT_PATTERN


@cache
def _loaded(name: str) -> tuple[RankBpeTokenizer, dict[bytes, int], list[bytes | None]]:
    """A shared tokenizer with its ``{bytes: rank}`` and its vocabulary (copied once)."""
    tok = load_ours(name)
    return tok, tok.mergeable_ranks, tok.vocab()


def _threshold(tok: RankBpeTokenizer, step: int | None) -> int:
    """The rank limit at merge `step` (None: all merges): the rank of the step-th merge."""
    ranks = tok.merge_ranks
    return INF_RANK if step is None or step >= len(ranks) else ranks[step]


def _oracle(enc: dict[bytes, int], pieces: list[bytes], thr: int) -> list[tuple[int, ...]]:
    """The one-chunk loop's ids of each piece."""
    return [piece_ids(enc, p, thr) for p in pieces]


def _batch(enc: dict[bytes, int], vocab: list, pieces: list[bytes], thr: int) -> list[tuple[int, ...]]:
    """What `merge_all` gives for the pieces it is meant for (2 bytes or more, not a whole token)."""
    merger = BatchMerger(enc, vocab, INF_RANK)
    out = merger.merge_all(pieces, thr)
    assert merger.merge_all(pieces, thr) == out  # a warm pair table changes nothing
    assert merger.merge_texts(pieces, thr) == [" ".join(map(str, t)) for t in out]  # the command line's
    return out


def _pieces(enc: dict[bytes, int], pieces, thr: int) -> list[bytes]:
    """The pieces `merge_all` is for: 2 bytes or more, not a token of rank below `thr`."""
    return [p for p in pieces if len(p) > 1 and enc.get(p, INF_RANK) >= thr]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(unicode_text(), min_size=1, max_size=20), step=st.sampled_from([None, 0, 1, 300, 20_000]))
def test_batch_equals_the_one_chunk_loop_on_unicode(name, texts, step):
    tok, enc, vocab = _loaded(name)
    thr = _threshold(tok, step)
    pieces = _pieces(enc, (c.encode("utf-8") for t in texts for c in tok.chunks(t)), thr)
    if pieces:
        assert _batch(enc, vocab, pieces, thr) == _oracle(enc, pieces, thr)


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.binary(min_size=2, max_size=40), min_size=1, max_size=30))
def test_batch_equals_the_one_chunk_loop_on_bytes(pieces):
    _, enc, vocab = _loaded("cl100k_base")
    for thr in (INF_RANK, 3000):
        some = _pieces(enc, pieces, thr)
        if some:
            assert _batch(enc, vocab, some, thr) == _oracle(enc, some, thr)


@st.composite
def vocab_and_pieces(draw):
    """Bytes plus random tokens over a small alphabet with random ranks: a join may rank below
    its parts, a token may be unreachable, runs like ``aaaa`` tie."""
    tokens = draw(st.sets(st.text("abcd", min_size=2, max_size=5).map(str.encode), max_size=40))
    ranks = draw(st.permutations(range(256, 256 + len(tokens))))
    vocab = {bytes([b]): b for b in range(256)}
    vocab.update(zip(sorted(tokens), ranks))
    pieces = draw(st.lists(st.text("abcd", min_size=2, max_size=24).map(str.encode), min_size=1, max_size=30))
    return vocab, pieces


@settings(max_examples=200, deadline=None)
@given(case=vocab_and_pieces(), cut=st.integers(256, 300))
def test_batch_equals_the_one_chunk_loop_on_random_vocabularies(case, cut):
    vocab, pieces = case
    tok = RankBpeTokenizer(vocab, pattern=GPT2_SPLIT_PATTERN, name="random")
    enc, ids = tok.mergeable_ranks, tok.vocab()
    for thr in (INF_RANK, cut):
        some = _pieces(enc, pieces, thr)
        if some:
            assert _batch(enc, ids, some, thr) == _oracle(enc, some, thr)


@pytest.mark.parametrize("wide_keys", [False, True])
def test_batch_on_long_pieces_and_wide_keys(wide_keys, monkeypatch):
    """Pieces of every length up to 200 bytes (tables 8 to 256 wide) from the corpus, also with
    int64 keys (what a vocabulary too big for int32 keys gets)."""
    from tokviz.core.bpe.byte_ranks import merge_rounds

    if wide_keys:
        monkeypatch.setattr(merge_rounds, "_KEY32_MAX", 0)
    tok, enc, vocab = _loaded("o200k_base")
    chunks = {c.encode("utf-8") for c in tok.chunks(corpus("udhr2_all.txt", 400_000))}
    by_length: dict[int, bytes] = {}
    for c in sorted(chunks):
        by_length.setdefault(len(c), c)
    pieces = _pieces(enc, [by_length[k] for k in sorted(by_length) if k <= 200], INF_RANK)
    pieces += [b"ab" * 100, bytes(range(256))[:150]]
    assert max(map(len, pieces)) > 128 and len({(len(p) - 1).bit_length() for p in pieces}) >= 6
    for thr in (INF_RANK, 5000):
        some = _pieces(enc, pieces, thr)
        assert _batch(enc, vocab, some, thr) == _oracle(enc, some, thr)


def _count_batches(monkeypatch) -> list[int]:
    """How many pieces each call of the numpy batch loop merges, from now on."""
    merged: list[int] = []
    merge_all = BatchMerger.merge_all

    def counted(self, pieces, thr):
        merged.append(len(pieces))
        return merge_all(self, pieces, thr)

    monkeypatch.setattr(BatchMerger, "merge_all", counted)
    return merged


def test_encode_ids_through_batches_equals_one_by_one(monkeypatch):
    """A text with thousands of new chunks takes the batch path; the ids are those of the loop
    run chunk by chunk (and of `encode_ordinary`), also when batches are small."""
    import tokviz.core.bpe.ranked.tokenizer as rb

    shared = load_ours("o200k_base")
    text = corpus("udhr2_all.txt", 300_000)
    merged = _count_batches(monkeypatch)  # pieces per batch merged
    with monkeypatch.context() as one_at_a_time:
        one_at_a_time.setattr(rb, "_BATCH_MIN", 10**9)
        one_by_one = fresh_copy(shared).encode_ids(text)
    assert not merged
    batches = []
    for batch_new in (None, 500):  # the default batch size, then small batches
        if batch_new is not None:
            monkeypatch.setattr(rb, "_BATCH_NEW", batch_new)
        merged.clear()
        assert fresh_copy(shared).encode_ids(text) == one_by_one
        batches.append(len(merged))
    assert 0 < batches[0] < batches[1]
    assert fresh_copy(shared).encode_ordinary(text).ids == one_by_one


def test_a_text_of_few_new_chunks_is_merged_one_by_one(monkeypatch):
    """English brings few new chunks for its length: while no batch loop is built they are merged
    one chunk at a time (numpy's rounds cost more to build than they save there), with the ids of
    the batches."""
    from tokviz.core.bpe.byte_ranks import mergers

    shared = load_ours("cl100k_base")
    text = corpus("gutenberg30.txt", 300_000)
    merged = _count_batches(monkeypatch)
    one_by_one = fresh_copy(shared).encode_ids(text, processes=2)
    assert not merged
    monkeypatch.setattr(mergers, "ONE_BY_ONE_MAX", 0)
    assert fresh_copy(shared).encode_ids(text, processes=2) == one_by_one
    assert merged  # batches, this time
    assert shared.encode_ordinary(text).ids == one_by_one


def test_more_new_chunks_than_the_sample_said_go_to_the_batches(monkeypatch):
    """Random letters joined by hyphens: the sample counts no new word (none is all letters), yet
    every chunk is new; past `ONE_BY_ONE_LIMIT` chunks merged one at a time the batches take over,
    with the same ids."""
    import random

    import tokviz.core.bpe.ranked.tokenizer as rb
    from tokviz.core.bpe.byte_ranks import mergers

    rng = random.Random(7)
    words = ("-".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(5)) for _ in range(3))
             for _ in range(6_000))
    text = " ".join(words)
    merged = _count_batches(monkeypatch)
    monkeypatch.setattr(mergers, "ONE_BY_ONE_LIMIT", 2_000)
    monkeypatch.setattr(rb, "_BATCH_NEW", 500)  # new chunks come in groups of about this many
    shared = load_ours("cl100k_base")
    ids = fresh_copy(shared).encode_ids(text)
    assert merged and sum(merged) < 18_000 - 2_000  # the batches took over after 2,000 or so
    assert shared.encode_ordinary(text).ids == ids


def test_a_megabyte_of_english_is_encoded_without_numpy(tmp_path):
    """The whole command: numpy (and its tables) are not imported for a text of few new chunks."""
    import subprocess
    import sys

    (tmp_path / "en.txt").write_text(corpus("gutenberg30.txt", 1_000_000), encoding="utf-8")
    code = ("import sys\n"
            "from tokviz.core.loading import load_tokenizer\n"
            f"tok = load_tokenizer({str(tiktoken_path('cl100k_base'))!r})\n"
            f"ids = tok.encode_ids(open({str(tmp_path / 'en.txt')!r}, encoding='utf-8').read(), processes=2)\n"
            "print(len(ids) > 200_000, 'numpy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_pair_table_asks_once_per_key_and_grows():
    asked: list[int] = []

    def missing(keys):
        asked.extend(keys.tolist())
        return [k * 3 + 1 for k in keys.tolist()]

    table = PairTable(missing, bits=4)
    rng = np.random.default_rng(7)
    seen: set[int] = set()
    for _ in range(20):
        keys = rng.integers(0, 5000, 300)
        assert table.lookup(keys).tolist() == [k * 3 + 1 for k in keys.tolist()]
        seen.update(keys.tolist())
    assert sorted(asked) == sorted(seen)  # each key asked for exactly once
    assert table.lookup(np.empty(0, np.int64)).tolist() == []


def test_a_full_pair_table_starts_over(monkeypatch):
    import tokviz.core.bpe.byte_ranks.pair_table as pt

    monkeypatch.setattr(pt, "MAX_KEYS", 1000)
    table = PairTable(lambda keys: (keys * 2).tolist(), bits=4)
    for start in range(0, 5000, 700):
        keys = np.arange(start, start + 700)
        assert table.lookup(keys).tolist() == (keys * 2).tolist()
        assert len(table) <= 1000
        assert table.lookup(keys).tolist() == (keys * 2).tolist()  # the newest keys are kept


def test_token_hashes_never_rule_a_token_out():
    """Every split of a token into two tokens may be a token; most other pairs are ruled out."""
    from tokviz.core.bpe.byte_ranks.token_hashes import TokenHashes

    _, enc, vocab = _loaded("cl100k_base")
    hashes = TokenHashes(vocab)
    left, right = [], []
    for t in list(enc)[:20_000]:
        for k in range(1, len(t)):
            if t[:k] in enc and t[k:] in enc:
                left.append(enc[t[:k]])
                right.append(enc[t[k:]])
    assert hashes.may_be_token(np.array(left), np.array(right)).all()
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 100_000, 5000), rng.integers(0, 100_000, 5000)
    joined = [vocab[x] + vocab[y] for x, y in zip(a.tolist(), b.tolist())]
    maybe = hashes.may_be_token(a, b)
    assert all(maybe[i] for i, j in enumerate(joined) if j in enc)
    assert maybe.sum() <= sum(j in enc for j in joined) + 5  # collisions are rare


@pytest.mark.parametrize("after", [0, 1_000_000])
def test_pair_ranks_are_the_dicts_with_or_without_the_hashes(after, monkeypatch):
    """`PairRanks` gives each joined pair's rank as the dict does: looked up as they come while
    few pairs have been asked for, through the tokens' hashes once many have (`HASHES_AFTER`)."""
    from tokviz.core.bpe.byte_ranks import pair_ranks

    monkeypatch.setattr(pair_ranks, "HASHES_AFTER", after / 100_000)
    _, enc, vocab = _loaded("cl100k_base")
    ranks = pair_ranks.PairRanks(enc, vocab, INF_RANK)
    rng = np.random.default_rng(5)
    left, right = rng.integers(0, 100_000, 3000), rng.integers(0, 100_000, 3000)
    tokens = [t for t in list(enc)[:5000] if len(t) > 1 and t[:1] in enc and t[1:] in enc]
    left = np.concatenate([left, [enc[t[:1]] for t in tokens]])  # pairs that are tokens too
    right = np.concatenate([right, [enc[t[1:]] for t in tokens]])
    expected = [enc.get(vocab[a] + vocab[b], INF_RANK) for a, b in zip(left.tolist(), right.tolist())]
    assert ranks(left * len(vocab) + right).tolist() == expected
    assert ranks.hashed == (after < 1_000_000)
    assert sum(r < INF_RANK for r in expected) >= len(tokens)


@settings(max_examples=60, deadline=None)
@given(case=vocab_and_pieces())
def test_byte_pair_table_and_shared_ids(case):
    from tokviz.core.bpe.byte_ranks.pair_ranks import byte_pair_ranks, shared_ids

    vocab, _ = case
    table = byte_pair_ranks(vocab, INF_RANK)
    assert table.tolist() == [vocab.get(bytes((a, b)), INF_RANK) for a in range(256) for b in range(256)]
    n = max(vocab.values()) + 1
    ids = shared_ids(vocab, n)
    assert ids == list(range(n))
    assert all(ids[r] is r for r in vocab.values())  # the dict's own int objects
    in_order = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    assert shared_ids(in_order, n) == list(range(n))
