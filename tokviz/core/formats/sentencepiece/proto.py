"""Reading a SentencePiece ``.model`` file: the protobuf wire format, parsed by hand.

A ``.model`` file is one serialized ``ModelProto`` (sentencepiece's ``sentencepiece_model.proto``):
field 1 repeats ``SentencePiece`` (piece, score, type), field 2 is the ``TrainerSpec``, 3 the
``NormalizerSpec``, 5 an optional ``denormalizer_spec``. Only the fields the encoder and decoder
need are kept; unknown fields and extensions are skipped by their wire type, as protobuf does.
Defaults are the schema's (``add_dummy_prefix`` true, ``model_type`` UNIGRAM, ...).

What this leaves out: writing models, and the fields only training uses.
"""

from __future__ import annotations

import array
import struct
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tokviz.core.errors import ModelFormatError
from tokviz.core.unigram.encoder.piece_table import PieceTable, first_invalid_utf8

# SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
PIECE_TYPES = {NORMAL: "normal", UNKNOWN: "unknown", CONTROL: "control", USER_DEFINED: "user-defined",
               UNUSED: "unused", BYTE: "byte"}
# TrainerSpec.ModelType
UNIGRAM_MODEL, BPE_MODEL = 1, 2
MODEL_TYPES = {UNIGRAM_MODEL: "unigram", BPE_MODEL: "bpe", 3: "word", 4: "char"}

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


class _Truncated(Exception):
    pass


@dataclass
class NormalizerSpec:
    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    normalization_rule_tsv: str = ""


@dataclass
class TrainerSpec:
    model_type: int = 1
    vocab_size: int = 8000
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    split_by_whitespace: bool = True
    allow_whitespace_only_pieces: bool = False
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = " \u2047 "
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1


@dataclass(eq=False)
class ModelProto:
    """The parts of a ``.model`` file tokviz uses: the pieces (a `PieceTable`), their scores
    (float32, as stored) and types (`NORMAL`, `UNKNOWN`, ...) as arrays; `scores` and `types`
    give them as lists."""

    pieces: PieceTable
    score_array: np.ndarray
    type_array: np.ndarray
    trainer: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer: NormalizerSpec = field(default_factory=NormalizerSpec)
    denormalizer: NormalizerSpec | None = None

    @cached_property
    def scores(self) -> list[float]:
        return self.score_array.tolist()

    @cached_property
    def types(self) -> list[int]:
        return self.type_array.tolist()

    @property
    def model_type(self) -> str:
        return MODEL_TYPES.get(self.trainer.model_type, f"type {self.trainer.model_type}")


def _varint(data: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    """The varint at `pos` and the position after it; `end` bounds it (default: the data's end)."""
    n = len(data) if end is None else end
    result = shift = 0
    while True:
        if pos >= n:
            raise _Truncated
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ModelFormatError("a number in the file is longer than 10 bytes")


def _fields_at(data: bytes, pos: int, n: int):
    """``(field number, wire type, value, where the value starts)`` of each field of
    ``data[pos:n]``; LEN values are bytes, others ints."""
    while pos < n:
        key, pos = _varint(data, pos, n)
        num, wt = key >> 3, key & 7
        at = pos
        if wt == 0:
            value, pos = _varint(data, pos, n)
        elif wt == 2:
            size, pos = _varint(data, pos, n)
            if pos + size > n:
                raise _Truncated
            at = pos
            value = data[pos : pos + size]
            pos += size
        elif wt == 5:
            if pos + 4 > n:
                raise _Truncated
            value = _F32.unpack_from(data, pos)[0]
            pos += 4
        elif wt == 1:
            if pos + 8 > n:
                raise _Truncated
            value = _F64.unpack_from(data, pos)[0]
            pos += 8
        else:
            raise ModelFormatError(f"unknown protobuf wire type {wt} (field {num})")
        if num == 0:
            raise ModelFormatError("field number 0 is not valid protobuf")
        yield num, wt, value, at


def _fields(data: bytes):
    """``(field number, wire type, value)`` of each field; LEN values are bytes, others ints."""
    for num, wt, value, _ in _fields_at(data, 0, len(data)):
        yield num, wt, value


def _text(value: object, what: str) -> str:
    if not isinstance(value, bytes):
        raise ModelFormatError(f"{what} has the wrong wire type")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFormatError(f"{what} is not valid UTF-8") from None


def _int32(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelFormatError(f"{what} has the wrong wire type")
    return value - (1 << 64) if value >= 1 << 63 else value


def _one_piece(data: bytes, a: int, b: int, k: int) -> tuple[int, int, float, int]:
    """Piece `k`, the message ``data[a:b]`` in any layout: (where its text starts, its length in
    bytes, score, type)."""
    text_at, size, score, typ = -1, 0, 0.0, NORMAL
    for num, wt, value, at in _fields_at(data, a, b):
        if num == 1:
            _text(value, f"piece {k}")  # each one checked, as the library parses every field
            text_at, size = at, len(value)
        elif num == 2:
            if wt != 5:
                raise ModelFormatError(f"the score of piece {k} is not a float")
            score = value  # type: ignore[assignment]
        elif num == 3:
            typ = _int32(value, f"the type of piece {k}")
    if text_at < 0:
        raise ModelFormatError(f"piece {k} has no text")
    return text_at, size, score, typ


def _parse_pieces(data: bytes, starts: np.ndarray, ends: np.ndarray) -> tuple[PieceTable, np.ndarray, np.ndarray]:
    """The repeated ``SentencePiece`` messages ``data[starts[k]:ends[k]]``: (pieces, float32
    scores, types). The common layout (piece, score, type, all short) is read for all of them at
    once in numpy, any other through `_fields_at`; the first bad piece raises, as one by one."""
    buf = np.frombuffer(data, dtype=np.uint8)
    last = len(buf) - 1

    def at(idx: np.ndarray) -> np.ndarray:
        return buf[np.minimum(idx, last)].astype(np.int64)

    size = ends - starts
    ln = at(starts + 1)
    fast = (size >= 2) & (at(starts) == 0x0A) & (ln < 0x80) & ((size == ln + 7) | (size == ln + 9))
    fast &= at(starts + 2 + ln) == 0x15
    typed = fast & (size == ln + 9)
    fast &= ~typed | ((at(starts + ln + 7) == 0x18) & (at(starts + ln + 8) < 0x80))
    text_at = starts + 2
    text_len = np.where(fast, ln, 0)
    types = np.where(typed, at(starts + ln + 8), NORMAL)
    raw = np.zeros(len(starts), dtype="<u4")  # the score's four bytes, little-endian
    for j in range(4):
        raw |= at(starts + ln + 3 + j).astype("<u4") << np.uint32(8 * j)
    scores = np.where(fast, raw, 0).astype("<u4").view("<f4")
    del raw, ln, size
    bad_at = len(starts)  # the first piece in another layout that is malformed
    error: Exception | None = None
    for k in np.flatnonzero(~fast).tolist():
        try:
            text_at[k], text_len[k], scores[k], types[k] = _one_piece(data, int(starts[k]), int(ends[k]), k)
        except (ModelFormatError, _Truncated) as exc:
            bad_at, error = k, exc
            break
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(text_len[:bad_at], out=offsets[1 : bad_at + 1])
    offsets[bad_at + 1 :] = offsets[bad_at]
    blob = _gather(buf, text_at[:bad_at], text_len[:bad_at])
    bad_text = first_invalid_utf8(blob, offsets[: bad_at + 1])
    if bad_text is not None:
        raise ModelFormatError(f"piece {bad_text} is not valid UTF-8")
    if error is not None:
        raise error
    return PieceTable.from_utf8(blob, offsets), scores, types


def _gather(buf: np.ndarray, at: np.ndarray, lengths: np.ndarray) -> bytes:
    """The byte runs ``buf[at[k]:at[k]+lengths[k]]`` one after the other (in blocks: the index
    arrays stay small). The index of each byte is the previous one plus 1, plus the gap to the
    next run where one starts: one cumulative sum."""
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    pos = 0
    block = 1 << 20
    for lo in range(0, len(at), block):
        some = np.flatnonzero(lengths[lo : lo + block])
        if not len(some):
            continue
        a, ln = at[lo:][some], lengths[lo:][some]
        total = int(ln.sum())
        first = np.zeros(len(ln), dtype=np.int64)
        np.cumsum(ln[:-1], out=first[1:])
        step = np.ones(total, dtype=np.int64)
        step[0] = a[0]
        step[first[1:]] = a[1:] - (a[:-1] + ln[:-1]) + 1
        out[pos : pos + total] = buf[np.cumsum(step, out=step)]
        pos += total
    return out.tobytes()


_TRAINER_INT = {3: "model_type", 4: "vocab_size", 40: "unk_id", 41: "bos_id", 42: "eos_id", 43: "pad_id"}
_TRAINER_BOOL = {35: "byte_fallback", 24: "treat_whitespace_as_suffix", 22: "split_by_whitespace",
                 26: "allow_whitespace_only_pieces"}
_TRAINER_TEXT = {45: "unk_piece", 46: "bos_piece", 47: "eos_piece", 48: "pad_piece", 44: "unk_surface"}


def _parse_trainer(data: bytes) -> TrainerSpec:
    spec = TrainerSpec()
    for num, _, value in _fields(data):
        if num in _TRAINER_INT:
            setattr(spec, _TRAINER_INT[num], _int32(value, f"trainer_spec.{_TRAINER_INT[num]}"))
        elif num in _TRAINER_BOOL:
            setattr(spec, _TRAINER_BOOL[num], bool(_int32(value, f"trainer_spec.{_TRAINER_BOOL[num]}")))
        elif num in _TRAINER_TEXT:
            setattr(spec, _TRAINER_TEXT[num], _text(value, f"trainer_spec.{_TRAINER_TEXT[num]}"))
    return spec


def _parse_normalizer(data: bytes) -> NormalizerSpec:
    spec = NormalizerSpec()
    for num, _, value in _fields(data):
        if num == 1:
            spec.name = _text(value, "normalizer_spec.name")
        elif num == 2:
            if not isinstance(value, bytes):
                raise ModelFormatError("normalizer_spec.precompiled_charsmap has the wrong wire type")
            spec.precompiled_charsmap = value
        elif num in (3, 4, 5):
            name = {3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}[num]
            setattr(spec, name, bool(_int32(value, f"normalizer_spec.{name}")))
        elif num == 6:
            spec.normalization_rule_tsv = _text(value, "normalizer_spec.normalization_rule_tsv")
    return spec


def _record_runs(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where runs of consecutive pieces in the common layout may start, found for the whole file
    at once: (positions that look like such a piece's record, in order; for each, how many of the
    next ones follow it back to back). Only a hint for `_top_fields`, which starts a run at a
    record it reached itself: from a true record, a record that ends where the next one starts
    leads to a true record, so the run is exact whatever else looks like a record."""
    found = []
    n = len(buf)
    block = 1 << 24
    for lo in range(0, max(n - 3, 0), block):
        q = lo + np.flatnonzero(buf[lo : min(lo + block, n - 3)] == 0x0A)
        q = q[(buf[q + 1] < 0x80) & (buf[q + 2] == 0x0A)]
        size, ln = buf[q + 1].astype(np.int64), buf[q + 3].astype(np.int64)
        q = q[((size == ln + 7) | (size == ln + 9)) & (q + 2 + size <= n)]
        found.append(q)
    rec = np.concatenate(found) if found else np.zeros(0, np.int64)
    nxt = rec + 2 + buf[rec + 1]
    breaks = np.flatnonzero(nxt[:-1] != rec[1:])
    # for record i: the index of the last record of its run (the first break at or after i)
    last = np.append(breaks, len(rec) - 1)[np.searchsorted(breaks, np.arange(len(rec)))] if len(rec) else rec
    return rec, last - np.arange(len(rec))


def _top_fields(data: bytes, starts: list, ends: list):
    """The top-level fields, the pieces (field 1, millions of them) noted in `starts` and `ends`
    (arrays of where each message lies in `data`; long runs in the common layout taken at once,
    `_record_runs`) and the others yielded as `_fields` would."""
    buf = np.frombuffer(data, dtype=np.uint8)
    rec, run = _record_runs(buf)
    ahead = -1  # the first run start at or after `pos` (looked up again once passed)
    one_s, one_e = array.array("q"), array.array("q")
    pos, n = 0, len(data)
    while pos < n:
        if data[pos] == 0x0A:  # field 1, length-delimited: a SentencePiece
            if pos > ahead >= -1:
                i = int(np.searchsorted(rec, pos))
                ahead = int(rec[i]) if i < len(rec) else -2  # -2: none left
            if pos == ahead and run[i] > 0:
                k = int(run[i])
                if one_s:
                    starts.append(np.frombuffer(one_s, np.int64))
                    ends.append(np.frombuffer(one_e, np.int64))
                    one_s, one_e = array.array("q"), array.array("q")
                starts.append(rec[i : i + k] + 2)
                ends.append(rec[i + 1 : i + k + 1])
                pos = int(rec[i + k])
                continue
            b = data[pos + 1] if pos + 1 < n else 0x80
            if b < 0x80:
                size, p = b, pos + 2
            else:
                size, p = _varint(data, pos + 1)
            pos = p + size
            if pos > n:
                raise _Truncated
            one_s.append(p)
            one_e.append(pos)
            continue
        key, p = _varint(data, pos)
        end = p
        wt = key & 7
        if wt == 0:
            _, end = _varint(data, p)
        elif wt == 2:
            size, p2 = _varint(data, p)
            end = p2 + size
        elif wt == 5:
            end = p + 4
        elif wt == 1:
            end = p + 8
        if end > n:
            raise _Truncated
        yield from _fields(data[pos:end])
        pos = end
    starts.append(np.frombuffer(one_s, np.int64))
    ends.append(np.frombuffer(one_e, np.int64))


def parse_model_proto(data: bytes) -> ModelProto:
    """Parse a serialized ``ModelProto``; a truncated or malformed one is a `ModelFormatError`."""
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    trainer = normalizer = denormalizer = None
    try:
        for num, wt, value in _top_fields(data, starts, ends):
            if num in (1, 2, 3, 5) and wt != 2:
                raise ModelFormatError(f"field {num} has the wrong wire type")
            if num == 2:
                trainer = _parse_trainer(value)  # type: ignore[arg-type]
            elif num == 3:
                normalizer = _parse_normalizer(value)  # type: ignore[arg-type]
            elif num == 5:
                denormalizer = _parse_normalizer(value)  # type: ignore[arg-type]
        pieces, scores, types = _parse_pieces(data, np.concatenate(starts), np.concatenate(ends))
    except _Truncated:
        raise ModelFormatError("truncated SentencePiece model (the data ends inside a field)") from None
    if not len(pieces):
        raise ModelFormatError("a SentencePiece model with no pieces")
    if trainer is None and normalizer is None:  # sentencepiece always writes both, after the pieces
        raise ModelFormatError("truncated SentencePiece model (pieces, but no trainer or normalizer spec)")
    return ModelProto(pieces, scores, types, trainer or TrainerSpec(), normalizer or NormalizerSpec(), denormalizer)


def peek_model_type(data: bytes) -> str:
    """The model type of a serialized ``ModelProto`` (``"unigram"``, ``"bpe"``, ...), reading only
    its trainer spec (the pieces are skipped, not parsed)."""
    try:
        for num, wt, value in _fields(data):
            if num == 2 and wt == 2:
                return MODEL_TYPES.get(_parse_trainer(value).model_type, "unknown")  # type: ignore[arg-type]
    except _Truncated:
        raise ModelFormatError("truncated SentencePiece model") from None
    return MODEL_TYPES[1]
