"""`SpanTable`: the numpy sums (long id lists) against the list sums (short ones) and
`byte_char_spans` of the decoded text."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.ranked import id_spans
from tokviz.core.bpe.ranked.id_spans import SpanTable
from tokviz.core.text.token_text import byte_char_spans

VOCAB = [bytes([b]) for b in range(256)] + [b"\xc3\xa9", b"\xa9x", b"\xe6\x97", b"\xa5\xe6", b"ab", b"\x80\x80", None, b""]


def _text_ids():
    """Ids whose bytes are UTF-8 (some tokens split characters), with the text they decode to."""
    chars = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
    return chars.map(lambda s: ([b for b in s.encode("utf-8")], s))


@settings(max_examples=200, deadline=None)
@given(case=_text_ids(), offset=st.integers(0, 1000), joined=st.booleans())
def test_numpy_columns_equal_list_columns(case, offset, joined):
    ids, text = case
    if joined:  # use the multi-byte tokens where the bytes allow: tokens that start inside a character
        data, out, k = bytes(ids), [], 0
        while k < len(data):
            for j, t in enumerate(VOCAB[256:262], 256):
                if data.startswith(t, k):
                    out.append(j)
                    k += len(t)
                    break
            else:
                out.append(data[k])
                k += 1
        ids = out
    table = SpanTable(VOCAB)
    expected = byte_char_spans(text, [len(VOCAB[i]) for i in ids], offset)
    lists = table.columns(ids, offset, len(text)) if len(ids) < id_spans.ARRAY_MIN else None
    arrays = table.array_columns(ids, offset, len(text))
    if ids:
        assert list(zip(*map(np.ndarray.tolist, arrays))) == expected
    if lists is not None:
        assert list(zip(*lists)) == expected
        warmed = SpanTable(VOCAB)
        warmed.warm_up()  # its lists made from the numpy tables
        assert warmed.columns(ids, offset, len(text)) == lists
    assert table.array_columns(ids, offset, len(text) + 1) is None  # tokens that do not cover the text


def test_long_parts_take_numpy_and_agree(monkeypatch):
    table = SpanTable(VOCAB)
    text = "héllo 日本 x" * 3
    ids = list(text.encode("utf-8"))
    parts = [(0, 5, False), (5, 6, True), (6, 6 + len(text) - 5, False)]  # a special token spans its part
    seg_ids = list(text[:5].encode()) + [300] + list(text[5:].encode())
    ends = [len(text[:5].encode()), len(text[:5].encode()) + 1, len(seg_ids)]
    short = table.parts_columns(seg_ids, parts, ends)
    assert isinstance(short[0], list)
    monkeypatch.setattr(id_spans, "ARRAY_MIN", 1)
    long = table.parts_columns(seg_ids, parts, ends)
    assert isinstance(long[0], np.ndarray)
    assert (long[0].tolist(), long[1].tolist()) == short
    assert table.columns(ids, 3, len(text)) == SpanTable(VOCAB).columns(ids, 3, len(text))
    assert table.parts_columns(seg_ids, parts, [e - 1 for e in ends]) is None
    assert table.parts_columns([], [], []) == ([], [])
