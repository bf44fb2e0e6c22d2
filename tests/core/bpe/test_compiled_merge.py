"""`tokviz.core.bpe.byte_ranks.compiled` and `mergers`: the compiled merge loop (numba) equals the
one-chunk loop (the oracle) on arbitrary Unicode, bytes and vocabularies, as tuples and as text;
`Mergers` picks it only for texts that repay it, and encoding through it gives the same ids."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.bpe.test_byte_ranks import vocab_and_pieces  # random vocabularies, pieces over their alphabet
from tests.real_tokenizers import corpus, fresh_copy, load_ours, piece_ids, unicode_text
from tokviz.core import jit
from tokviz.core.bpe.byte_ranks import mergers
from tokviz.core.bpe.byte_ranks.mergers import KERNELS, Mergers, needs_kernels
from tokviz.core.bpe.pair_merge import INF_RANK
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.text.split import GPT2_SPLIT_PATTERN


def _kernels():
    k = jit.kernels(KERNELS)
    if k is None:
        pytest.skip("numba is not installed here (or TOKVIZ_JIT=0): the plain path is tested elsewhere")
    return k


@cache
def _compiled(name: str):
    """A shared tokenizer's ``{bytes: rank}`` and its compiled merger."""
    from tokviz.core.bpe.byte_ranks.compiled import CompiledMerger

    tok = load_ours(name)
    enc = tok.mergeable_ranks
    return tok, enc, CompiledMerger(_kernels(), enc, tok.n_vocab)


def _check(merger, enc: dict[bytes, int], pieces: list[bytes], thr: int) -> None:
    """Tuples and texts of the compiled loop equal the oracle's on the pieces it is meant for."""
    some = [p for p in pieces if len(p) > 1 and enc.get(p, INF_RANK) >= thr]
    if not some:
        return
    want = [piece_ids(enc, p, thr) for p in some]
    assert merger.merge_all(some, thr) == want
    assert merger.merge_texts(some, thr) == [" ".join(map(str, t)) for t in want]


def _threshold(tok, step: int | None) -> int:
    ranks = tok.merge_ranks
    return INF_RANK if step is None or step >= len(ranks) else ranks[step]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(unicode_text(), min_size=1, max_size=20), step=st.sampled_from([None, 0, 1, 300, 20_000]))
def test_compiled_equals_the_one_chunk_loop_on_unicode(name, texts, step):
    tok, enc, merger = _compiled(name)
    _check(merger, enc, [c.encode("utf-8") for t in texts for c in tok.chunks(t)], _threshold(tok, step))


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.binary(min_size=2, max_size=300), min_size=1, max_size=30))
def test_compiled_equals_the_one_chunk_loop_on_bytes(pieces):
    _, enc, merger = _compiled("cl100k_base")
    for thr in (INF_RANK, 3000):
        _check(merger, enc, pieces, thr)


@settings(max_examples=200, deadline=None)
@given(case=vocab_and_pieces(), cut=st.integers(256, 320))
def test_compiled_equals_the_one_chunk_loop_on_random_vocabularies(case, cut):
    from tokviz.core.bpe.byte_ranks.compiled import CompiledMerger

    vocab, pieces = case
    merger = CompiledMerger(_kernels(), vocab, max(vocab.values()) + 1)
    for thr in (INF_RANK, cut):
        _check(merger, vocab, pieces, thr)


def test_long_pieces_and_the_heap_loop_mix_in_order():
    """`Mergers` sends pieces beyond its longest to the heap loop and keeps the order, on either
    loop, as tuples and as text."""
    tok = load_ours("o200k_base")
    enc = tok.mergeable_ranks
    chunks = sorted({c.encode("utf-8") for c in tok.chunks(corpus("udhr2_all.txt", 400_000))}, key=len)[-300:]
    pieces = [p for p in chunks if p not in enc] + [b"ab" * 3000, "\u0e01\u0e32".encode() * 900]
    want = [piece_ids(enc, p, INF_RANK) for p in pieces]
    plain = Mergers(enc, tok.vocab(), INF_RANK)
    assert plain.merge_all(pieces, INF_RANK) == want
    assert plain.merge_all(pieces, INF_RANK, as_text=True) == [" ".join(map(str, t)) for t in want]
    _kernels()
    plain.compiled()
    assert max(map(len, pieces)) > mergers.COMPILED_LONGEST > min(map(len, pieces))
    assert plain.merge_all(pieces, INF_RANK) == want
    assert plain.merge_all(pieces, INF_RANK, as_text=True) == [" ".join(map(str, t)) for t in want]


def test_kernels_are_loaded_only_for_texts_that_repay_them(monkeypatch):
    """Many languages' new words: yes; one language's repeated words, or a short text: no."""
    monkeypatch.setattr(jit, "enabled", lambda: True)
    enc = load_ours("o200k_base").mergeable_ranks
    assert needs_kernels(corpus("udhr2_all.txt", None), enc)
    assert not needs_kernels(corpus("udhr2_all.txt", 1_000_000), enc)  # too few new words in all
    assert not needs_kernels(corpus("gutenberg30.txt", 10_000_000), enc)
    monkeypatch.setattr(jit, "enabled", lambda: False)
    assert not needs_kernels(corpus("udhr2_all.txt", None), enc)


def test_encoding_through_the_compiled_loop_gives_the_same_ids(monkeypatch):
    """A text that loads the kernels (thresholds lowered) encodes to the ids of the plain loops,
    by every path: ids, ids as text, the encoding."""
    _kernels()
    shared = load_ours("o200k_base")
    text = corpus("udhr2_all.txt", 300_000)
    plain = fresh_copy(shared)
    want = plain.encode_ids(text)
    monkeypatch.setattr(mergers, "_EXPECTED_MIN", 1)
    monkeypatch.setattr(mergers, "_DENSITY_MIN", 0.0)
    for step in (None, 5000):
        tok = fresh_copy(shared)
        ids = tok.encode_ids(text, step=step)
        assert tok.encode_ids_text(text, step=step) == " ".join(map(str, ids))
        assert ids == (want if step is None else plain.encode_ids(text, step=step))
        assert tok.encode(text, step=step).ids == ids


def test_a_vocabulary_with_gaps_and_specials():
    """Ranks with gaps (room for special tokens) and a token longer than 8 bytes at a high rank."""
    from tokviz.core.bpe.byte_ranks.compiled import CompiledMerger

    vocab = {bytes([b]): b for b in range(256)}
    vocab.update({b"ab": 300, b"abab": 301, b"abababababab": 900, b"ababababab": 905})
    tok = RankBpeTokenizer(vocab, pattern=GPT2_SPLIT_PATTERN, special_tokens={"<|x|>": 1000}, name="gaps")
    merger = CompiledMerger(_kernels(), tok.mergeable_ranks, tok.n_vocab)
    pieces = [b"ab" * k for k in range(1, 12)] + [b"xabababababab"]
    _check(merger, tok.mergeable_ranks, pieces, INF_RANK)
    _check(merger, tok.mergeable_ranks, pieces, 905)


@settings(max_examples=150, deadline=None)
@given(case=vocab_and_pieces(), entries=st.integers(1, 6), store_bytes=st.sampled_from([1, 64, 10**9]))
def test_chunk_ids_equal_the_one_chunk_loop_on_random_vocabularies(case, entries, store_bytes):
    """`CompiledMerger.chunk_ids`: a list of chunks looked up and merged in one call, through a
    cache that starts with room for one chunk, grows and starts over (after `entries` chunks, or
    `store_bytes` bytes);
    the list twice (the second time from the cache), a chunk that is a token being that token."""
    from tokviz.core.bpe.byte_ranks.compiled import CompiledMerger
    from tokviz.core.bpe.byte_ranks.word_cache_arrays import WordCacheArrays

    vocab, pieces = case
    merger = CompiledMerger(_kernels(), vocab, max(vocab.values()) + 1)
    merger.cache = WordCacheArrays(_kernels(), 4096, entries=entries, first_bits=1, store_bytes=store_bytes)
    chunks = [p.decode() for p in pieces] + [p.decode()[:1] for p in pieces] + sorted(p.decode() for p in vocab
                                                                                       if len(p) > 1)
    want = [i for c in chunks for i in piece_ids(vocab, c.encode(), INF_RANK)]
    assert merger.chunk_ids(chunks).tolist() == want
    assert merger.chunk_ids(chunks[::-1]).tolist() == [i for c in chunks[::-1] for i in piece_ids(vocab, c.encode(),
                                                                                                 INF_RANK)]
    assert merger.chunk_ids(chunks).tolist() == want


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(unicode_text(), min_size=1, max_size=20))
def test_chunk_ids_on_unicode(name, texts):
    tok, enc, merger = _compiled(name)
    chunks = [c for t in texts for c in tok.chunks(t)]
    try:
        want = [i for c in chunks for i in piece_ids(enc, c.encode("utf-8"), INF_RANK)]
    except UnicodeEncodeError:  # a lone surrogate: the caller's own path
        assert merger.chunk_ids(chunks) is None
        return
    assert merger.chunk_ids(chunks).tolist() == want


def test_chunk_ids_leave_long_chunks_and_lone_surrogates_to_the_caller():
    from tokviz.core.bpe.byte_ranks.compiled import CHUNK_LONGEST

    _, enc, merger = _compiled("cl100k_base")
    assert merger.chunk_ids(["ab", "x" * (CHUNK_LONGEST + 1)]) is None
    assert merger.chunk_ids(["ab", "c\ud800"]) is None
    assert merger.lists_ids([["a", " b"], ["\ud800"], [" c"]], lambda chunks: [-7]) == [*merger.chunk_ids(["a", " b"]),
                                                                                      -7, *merger.chunk_ids([" c"])]
    longest = "é" * (CHUNK_LONGEST // 2)  # CHUNK_LONGEST bytes: merged
    assert merger.chunk_ids([longest]).tolist() == list(piece_ids(enc, longest.encode(), INF_RANK))


def test_threads_share_the_chunk_cache_as_tiktoken_encodes(monkeypatch):
    """Two threads encode udhr2's lines with one o200k tokenizer whose compiled loop is loaded (its
    chunk cache grows meanwhile): every line is tiktoken's."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.real_tokenizers import load_reference

    _kernels()
    monkeypatch.setattr(mergers, "_EXPECTED_MIN", 1)
    monkeypatch.setattr(mergers, "_DENSITY_MIN", 0.0)
    tok = fresh_copy(load_ours("o200k_base"))
    text = corpus("udhr2_all.txt", 400_000)
    tok.prepare_for(text)
    lines = text.split("\n")
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(tok.encode_ids, lines, chunksize=64))
    ref = load_reference("o200k_base")
    assert got == [ref.encode_ordinary(line) for line in lines]


def test_long_lists_of_chunks_go_in_several_calls(monkeypatch):
    from tokviz.core.bpe.byte_ranks import compiled

    tok, enc, merger = _compiled("o200k_base")
    chunks = tok.chunks(corpus("udhr2_all.txt", 20_000))
    want = [i for c in chunks for i in piece_ids(enc, c.encode("utf-8"), INF_RANK)]
    monkeypatch.setattr(compiled, "CALL_CHUNKS", 7)
    assert merger.lists_ids([chunks[:100], chunks[100:]], lambda c: []) == want
