"""The checks sentencepiece's ``ModelInterface::InitializePieces`` makes on a model's pieces, made
for all pieces at once (numpy), with the error the library's loop would meet first.

What this leaves out: the file's format (`proto`), scores (`lattice`).
"""

from __future__ import annotations

import numpy as np

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.sentencepiece.decode import BYTE_NAMES
from tokviz.core.formats.sentencepiece.proto import BYTE, PIECE_TYPES, UNKNOWN
from tokviz.core.unigram.encoder.piece_table import PieceIndex, PieceTable

MAX_PIECE_BYTES = 8000  # pieces this long (in UTF-8) or longer are refused


def check_pieces(pieces: PieceTable, types: np.ndarray, skipped: np.ndarray, in_normal: np.ndarray,
                 index: PieceIndex, *, byte_fallback: bool) -> tuple[int, set[int]]:
    """Refuse (ModelFormatError) what the library refuses, naming the first piece it stops at:
    empty or too long pieces, unknown types, null characters, a piece twice in the same table
    (`in_normal` or not), two unknown pieces, byte pieces that are not ``<0xNN>`` or without
    byte fallback; `skipped` pieces (``"\\0"`` unused) are passed over. Returns the unknown
    piece's id (-1: none) and the bytes of the byte pieces."""
    blen = pieces.byte_lengths
    bad = (blen == 0) | (blen >= MAX_PIECE_BYTES) | ~np.isin(types, list(PIECE_TYPES))
    bad |= ~skipped & pieces.holding("\0")
    unknown = np.flatnonzero(types == UNKNOWN)
    if len(unknown) > 1:
        bad[unknown[1]] = True
    byte_ids = np.flatnonzero(types == BYTE).tolist()
    names = {i: BYTE_NAMES.get(pieces[i]) for i in byte_ids}
    for i in byte_ids:
        if not byte_fallback or names[i] is None:
            bad[i] = True
    first_of: dict[int, int] = {}  # a repeated piece: its first id in the same table
    for group in index.repeats():
        seen: dict[bool, int] = {}
        for i in group:
            if skipped[i]:
                continue
            table = bool(in_normal[i])
            if table in seen:
                first_of[i] = seen[table]
                bad[i] = True
            else:
                seen[table] = i
    at = np.flatnonzero(bad)
    if len(at):
        _raise_for(int(at[0]), pieces, types, skipped, first_of, unknown, names, byte_fallback)
    unk_id = int(unknown[0]) if len(unknown) else -1
    if unk_id < 0 and not byte_fallback:
        raise ModelFormatError("the model defines no unknown piece")
    found = {names[i] for i in byte_ids}
    if byte_fallback and len(found) < 256:
        raise ModelFormatError("byte_fallback is on but the model lacks some of the 256 <0xNN> byte pieces")
    return unk_id, found  # type: ignore[return-value]


def _raise_for(i: int, pieces: PieceTable, types: np.ndarray, skipped: np.ndarray, first_of: dict[int, int],
               unknown: np.ndarray, names: dict[int, int | None], byte_fallback: bool) -> None:
    """The error of piece `i`, the first piece with one: the library's checks in its order."""
    p, ty = pieces[i], int(types[i])
    if not p:
        raise ModelFormatError(f"piece {i} is empty")
    if int(pieces.byte_lengths[i]) >= MAX_PIECE_BYTES:
        raise ModelFormatError(f"piece {i} is too long")
    if ty not in PIECE_TYPES:
        raise ModelFormatError(f"piece {i} ({p!r}) has an unknown type {ty}")
    if not skipped[i] and "\0" in p:
        raise ModelFormatError(f"piece {i} holds a null character")
    if i in first_of:
        raise ModelFormatError(f"piece {p!r} is defined twice (ids {first_of[i]} and {i})")
    if ty == UNKNOWN:
        raise ModelFormatError(f"two unknown pieces (ids {int(unknown[0])} and {i})")
    if not byte_fallback:
        raise ModelFormatError(f"byte piece {p!r} although byte_fallback is off")
    raise ModelFormatError(f"byte piece {p!r} is not <0xNN>")
