"""A SentencePiece encoding's fields made column by column: the model's pieces over the normalized
text as lists of ids, starts and ends (sentencepiece's unknown handling applied), then ids, token
bytes and character spans appended to an `Encoding` list by list, not token by token.

What this leaves out: the segmentation (`bpe`, the Unigram lattice), ids alone (`unknown_ids`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from operator import lt

from tokviz.core.encoding import Encoding, uncovered
from tokviz.core.formats.sentencepiece.unknown_ids import unknown_places


def unknown_columns(norm: str, ids: list[int], ends: list[int], *, unknown: Collection[int], unk_id: int,
                    byte_ids: Sequence[int] | None) -> tuple[list[int], list[int], list[int]]:
    """Ids, starts and ends of the pieces (ids -1 or in `unknown`: unknown) over `norm` after the
    unknown handling: an unknown piece becomes its UTF-8 bytes' pieces (each with the piece's
    span) with `byte_ids`, else a run of unknowns becomes one token spanning the run."""
    if -1 not in ids and unknown.isdisjoint(ids):
        return ids, [0, *ends[:-1]], ends
    out_ids: list[int] = []
    starts: list[int] = []
    out_ends: list[int] = []
    prev_unk = False
    a = 0
    for i, b in zip(ids, ends):
        if i < 0 or i in unknown:
            if byte_ids is not None:
                data = norm[a:b].encode("utf-8")
                out_ids.extend([byte_ids[by] for by in data])
                starts.extend([a] * len(data))
                out_ends.extend([b] * len(data))
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


def append_columns(out: Encoding, text: str, offset: int, n2o: list[int], ids: list[int], starts: list[int],
                   ends: list[int], *, tokens_of: Callable[[list[int]], list[bytes]], unknown: Collection[int]) -> None:
    """Append the pieces (positions in the normalized text, `n2o` its map to `text`) to `out`: ids,
    tokens, spans in `text` moved by `offset`, unknown pieces, and the stretches of `text` no
    token covers that hold more than whitespace (dropped)."""
    base = len(out.ids)
    out.unknown.extend([base + k for k in unknown_places(ids, (-1, *unknown))])
    out.ids.extend(ids)
    out.tokens.extend(tokens_of(ids))
    get = n2o.__getitem__
    s_col = list(map(get, starts))
    e_col = list(map(get, ends))
    if any(map(lt, e_col, s_col)):  # a piece whose end maps before its start: empty at its start
        e_col = list(map(max, e_col, s_col))
    covered = list(zip(s_col, e_col))
    out.spans.extend(covered if not offset else [(offset + s, offset + e) for s, e in covered])
    out.dropped.extend((offset + x, offset + y) for x, y in uncovered(sorted(covered), len(text))
                       if text[x:y].strip())
