"""A SentencePiece encoding's fields made column by column: the model's pieces over the normalized
text as lists of ids, starts and ends (sentencepiece's unknown handling applied), then ids, token
bytes and character spans appended to an `Encoding` list by list, not token by token.

What this leaves out: the segmentation (`bpe`, the Unigram lattice), ids alone (`unknown_ids`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from operator import lt

import numpy as np

from tokviz.core.encoding import Encoding, uncovered
from tokviz.core.formats.sentencepiece.unknown_ids import unknown_places

MANY_PIECES = 4096  # from this many pieces on, the columns are made in numpy


def unknown_columns(norm: str, ids: list[int], ends: list[int], *, unknown: Collection[int], unk_id: int,
                    byte_ids: Sequence[int] | None) -> tuple[list[int], list[int], list[int]]:
    """Ids, starts and ends of the pieces (ids -1 or in `unknown`: unknown) over `norm` after the
    unknown handling: an unknown piece becomes its UTF-8 bytes' pieces (each with the piece's
    span) with `byte_ids`, else a run of unknowns becomes one token spanning the run."""
    if -1 not in ids and unknown.isdisjoint(ids):
        return ids, [0, *ends[:-1]], ends
    if len(ids) >= MANY_PIECES:
        return _numpy_columns(norm, ids, ends, unknown, unk_id, byte_ids)
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


def _numpy_columns(norm: str, ids: list[int], ends: list[int], unknown: Collection[int], unk_id: int,
                   byte_ids: Sequence[int] | None) -> tuple[list[int], list[int], list[int]]:
    """`unknown_columns` of many pieces in numpy (a text of a script the model lacks has millions)."""
    idx, e = np.asarray(ids, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    st = np.concatenate(([0], e[:-1]))
    unk = idx < 0
    if unknown:
        unk |= np.isin(idx, np.fromiter(unknown, np.int64, len(unknown)))
    if byte_ids is None:  # a run of unknowns: one token from the run's start to its end
        keep = ~(unk & np.concatenate(([False], unk[:-1])))
        at = np.flatnonzero(keep)
        last = np.append(at[1:] - 1, len(idx) - 1)  # each kept piece's run ends where the next kept one starts
        return np.where(idx < 0, unk_id, idx)[at].tolist(), st[at].tolist(), e[last].tolist()
    at = np.flatnonzero(unk)
    a_col, b_col = st[at].tolist(), e[at].tolist()
    chars = "".join(map(norm.__getitem__, map(slice, a_col, b_col)))
    data = np.frombuffer(chars.encode("utf-8"), np.uint8)  # (a lone surrogate: the error of the loop above)
    cps = np.frombuffer(chars.encode("utf-32-le", "surrogatepass"), np.uint32)
    width = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)  # each character's UTF-8 bytes
    lens = np.ones(len(idx), np.int64)
    lens[at] = np.add.reduceat(width, np.concatenate(([0], np.cumsum(e[at] - st[at])[:-1])))
    out = np.repeat(idx, lens)
    out[np.repeat(unk, lens)] = np.asarray(byte_ids, dtype=np.int64)[data]
    return out.tolist(), np.repeat(st, lens).tolist(), np.repeat(e, lens).tolist()


def span_gaps(s_col: list[int], e_col: list[int], length: int) -> list[tuple[int, int]]:
    """`uncovered` of the spans ``(s_col[k], e_col[k])``, in numpy (many spans)."""
    n = len(s_col)
    s, e = np.fromiter(s_col, np.int64, n), np.fromiter(e_col, np.int64, n)
    if (s[1:] < s[:-1]).any():
        order = np.argsort(s, kind="stable")
        s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)  # how far the spans so far cover
    at = np.flatnonzero(s[1:] > reach[:-1])
    gaps = list(zip(reach[at].tolist(), s[at + 1].tolist()))
    if s[0] > 0:
        gaps.insert(0, (0, int(s[0])))
    if reach[-1] < length:
        gaps.append((int(reach[-1]), length))
    return gaps


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
    gaps = span_gaps(s_col, e_col, len(text)) if len(s_col) >= MANY_PIECES else uncovered(sorted(covered), len(text))
    out.dropped.extend((offset + x, offset + y) for x, y in gaps if text[x:y].strip())
