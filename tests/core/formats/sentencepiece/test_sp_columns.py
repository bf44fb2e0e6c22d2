"""`columns`: the unknown handling with spans and the appended fields, against the obvious
piece-by-piece loops on random pieces (unknown runs, byte fallback, maps that reorder)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.encoding import Encoding, uncovered
from tokviz.core.formats.sentencepiece.columns import append_columns, unknown_columns

UNKNOWN = frozenset({0, 5})


def _reference(norm, ids, ends, *, unknown, unk_id, byte_ids):
    """Piece by piece: an unknown piece becomes its bytes, or joins the run of unknowns before it."""
    out_ids, starts, out_ends, prev_unk, a = [], [], [], False, 0
    for i, b in zip(ids, ends):
        if i < 0 or i in unknown:
            if byte_ids is not None:
                data = norm[a:b].encode("utf-8")
                out_ids += [byte_ids[by] for by in data]
                starts += [a] * len(data)
                out_ends += [b] * len(data)
            elif prev_unk:
                out_ends[-1] = b
            else:
                out_ids.append(unk_id if i < 0 else i)
                starts.append(a)
                out_ends.append(b)
            prev_unk = True
        else:
            out_ids.append(i)
            starts.append(a)
            out_ends.append(b)
            prev_unk = False
        a = b
    return out_ids, starts, out_ends


@st.composite
def pieces(draw):
    norm = draw(st.text(alphabet="ab é日😀", min_size=1, max_size=40))
    cuts = sorted(draw(st.sets(st.integers(1, len(norm) - 1), max_size=len(norm) - 1))) if len(norm) > 1 else []
    ends = [*cuts, len(norm)]
    ids = draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3, 5, 7]), min_size=len(ends), max_size=len(ends)))
    return norm, ids, ends


@settings(max_examples=300, deadline=None)
@given(case=pieces(), fallback=st.booleans())
def test_unknown_columns_equal_the_piece_by_piece_loop(case, fallback):
    norm, ids, ends = case
    byte_ids = [1000 + b for b in range(256)] if fallback else None
    kw = {"unknown": UNKNOWN, "unk_id": 0, "byte_ids": byte_ids}
    assert unknown_columns(norm, ids, ends, **kw) == _reference(norm, ids, ends, **kw)


@settings(max_examples=300, deadline=None)
@given(case=pieces(), shuffle=st.randoms(use_true_random=False), offset=st.sampled_from([0, 3]))
def test_appended_spans_and_dropped_stretches(case, shuffle, offset):
    """Spans through the map to the text, and the stretches no span covers, in order or not."""
    norm, ids, ends = case
    text = "x" + norm + "yz"
    n2o = list(range(1, len(norm) + 2))
    if shuffle.random() < 0.5:  # a map that sends some ends before their starts
        shuffle.shuffle(n2o)
    starts = [0, *ends[:-1]]
    out = Encoding([], [], [], [], [], [])
    append_columns(out, text, offset, n2o, ids, starts, ends, tokens_of=lambda xs: [b"?"] * len(xs),
                   unknown=UNKNOWN)
    spans = [(n2o[a], max(n2o[a], n2o[b])) for a, b in zip(starts, ends)]
    assert out.spans == [(offset + a, offset + b) for a, b in spans]
    assert out.dropped == [(offset + x, offset + y) for x, y in uncovered(sorted(spans), len(text))
                           if text[x:y].strip()]
