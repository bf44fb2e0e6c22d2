"""`ids_vocab`: the bytes of every id, from ranks in file order or in any order, checked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.ranked.ids_vocab import by_rank, ids_vocab
from tokviz.core.errors import ModelFormatError

BYTES = {bytes([b]): b for b in range(256)}


def naive(enc: dict[bytes, int], specials: dict[str, int]) -> list[bytes | None]:
    """Every id up to the largest, looked up one by one."""
    by_id = {i: t for t, i in enc.items()} | {i: s.encode() for s, i in specials.items()}
    return [by_id.get(i) for i in range(max(by_id) + 1)]


@settings(max_examples=200, deadline=None)
@given(tokens=st.sets(st.binary(min_size=2, max_size=4), max_size=30), gaps=st.lists(st.integers(0, 3), max_size=30),
       shuffled=st.booleans(), data=st.data())
def test_any_ranks_give_the_token_of_each_id(tokens, gaps, shuffled, data):
    ranks = list(range(256, 256 + len(tokens)))
    if shuffled:
        ranks = data.draw(st.permutations(ranks))
    ranks = [r + sum(gaps[:k]) for k, r in enumerate(ranks)] if not shuffled else ranks
    enc = dict(BYTES) | dict(zip(sorted(tokens), ranks))
    top = max(enc.values())
    specials = {"<|end|>": top + 1 + data.draw(st.integers(0, 3))}
    assert ids_vocab(dict(enc), specials, "t") == naive(enc, specials)


def test_ranks_in_file_order_are_the_tokens_as_they_come():
    enc = dict(BYTES) | {b"ab": 256, b"abc": 257}
    vocab = by_rank(enc, "t")
    assert vocab == list(enc)
    assert ids_vocab(enc, {"<s>": 260}, "t")[256:] == [b"ab", b"abc", None, None, b"<s>"]


def test_bad_vocabularies_are_refused_with_their_reason():
    with pytest.raises(ModelFormatError, match="share a rank"):
        ids_vocab(dict(BYTES) | {b"ab": 256, b"cd": 256}, {}, "t")  # (a dict keeps both keys)
    with pytest.raises(ModelFormatError, match="single-byte tokens"):
        ids_vocab({b"a": 0, b"b": 1}, {}, "t")
    with pytest.raises(ModelFormatError, match="reuses the id 97"):
        ids_vocab(dict(BYTES), {"<s>": 97}, "t")
    assert by_rank({}, "t") == []
