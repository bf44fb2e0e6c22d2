"""A model file written in pieces (`json_pieces`) is the very text one ``json.dumps`` call gives,
and a write whose pieces fail half way leaves the old file as it was and no temporary file."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.errors import TokvizError
from tokviz.core.io.json_stream import json_pieces
from tokviz.core.io.safe_files import write_atomic

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                    st.text(max_size=6))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=9),
    st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 9)), inner, max_size=5)), max_leaves=60)


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(1, 4))
def test_pieces_join_to_json_dumps(obj, block):
    expected = json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    assert b"".join(json_pieces(obj, block)) == expected


def test_a_long_list_is_written_a_block_at_a_time():
    rows = [[i, i + 1, [i * 2]] for i in range(10_000)]
    pieces = list(json_pieces({"steps": {"rows": rows}}, block=2048))
    assert max(map(len, pieces)) < sum(map(len, pieces)) / 4  # no piece holds the whole list
    assert json.loads(b"".join(pieces)) == {"steps": {"rows": rows}}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-9, 99), max_size=3), max_size=12), st.integers(1, 4))
def test_texts_made_elsewhere_are_written_as_they_are_a_block_at_a_time(rows, block):
    """A list of `RawJSON` items (a model's rows made as text) gives the bytes of the rows' lists."""
    from tokviz.core.io.json_stream import RawJSON, compact_json

    texts = [RawJSON(compact_json(r).encode("ascii")) for r in rows]
    expected = json.dumps({"rows": rows, "n": 1}, separators=(",", ":")).encode("ascii")
    pieces = list(json_pieces({"rows": texts, "n": 1}, block))
    assert b"".join(pieces) == expected
    assert len(pieces) <= 7 + -(-len(rows) // block)  # a block of items a piece, not an item


def test_a_failing_piece_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.json"
    path.write_bytes(b"old")

    def pieces():
        yield b"{"
        raise TokvizError("cannot encode")

    with pytest.raises(TokvizError):
        write_atomic(path, pieces())
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]
    write_atomic(path, iter([b"[1,", b"2]"]))
    assert json.loads(path.read_text()) == [1, 2]
