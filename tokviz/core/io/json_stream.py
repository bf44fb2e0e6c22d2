"""JSON text written a piece at a time: the same bytes as one ``json.dumps`` call, without the
whole text (and its encoded copy) in memory at once.

A model file is one dict whose few long lists (a step a row: 100,000 rows for a large vocabulary)
are most of it. `json_pieces` writes every long list a block of items at a time, each block by
the C encoder (``json.dumps`` of a slice, its brackets dropped), and everything else in one call:
what ``json.dumps(obj, ensure_ascii=True, separators=(",", ":"))`` gives, byte for byte. One call
would hold the whole text, its encoded copy and the encoder's buffers beside the rows: on the
whole of gutenberg30's model that is a peak of its own, above the training's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

BLOCK = 2048  # list items a piece


class RawJSON(bytes):
    """JSON text made elsewhere (ASCII, compact), which `json_pieces` writes as it is: a value of
    a dict, or every item of a list (a list whose first item is one)."""

    __slots__ = ()


# compact ASCII JSON text of one value, as `json_pieces` writes it (for writers of `RawJSON`)
compact_json = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), check_circular=False).encode


def json_pieces(obj: object, block: int = BLOCK) -> Iterator[bytes]:
    """`obj` as compact ASCII JSON (``json.dumps(obj, separators=(",", ":"))``), in pieces.

    >>> b"".join(json_pieces({"a": [1, [2, 3], {"b": None}], "c": "é"}, block=2))
    b'{"a":[1,[2,3],{"b":null}],"c":"\\\\u00e9"}'
    >>> b"".join(json_pieces({"rows": [RawJSON(b"[1]"), RawJSON(b"[]")], "n": RawJSON(b"2")}))
    b'{"rows":[[1],[]],"n":2}'
    """
    if isinstance(obj, RawJSON):
        yield obj
    elif isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        yield b"{"
        for i, (key, value) in enumerate(obj.items()):
            yield (("," if i else "") + compact_json(key) + ":").encode("ascii")
            yield from json_pieces(value, block)
        yield b"}"
    elif isinstance(obj, list) and obj and isinstance(obj[0], RawJSON):
        yield b"["
        for a in range(0, len(obj), block):
            yield (b"," if a else b"") + b",".join(obj[a:a + block])
        yield b"]"
    elif isinstance(obj, list) and len(obj) > block:
        yield b"["
        for a in range(0, len(obj), block):
            text = compact_json(obj[a:a + block])
            yield (("," if a else "") + text[1:-1]).encode("ascii")
        yield b"]"
    else:
        yield compact_json(obj).encode("ascii")
