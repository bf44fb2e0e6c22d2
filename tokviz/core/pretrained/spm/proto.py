"""Reading a SentencePiece ``.model`` file: the protobuf wire format, parsed by hand.

A ``.model`` file is one serialized ``ModelProto`` (sentencepiece's ``sentencepiece_model.proto``):
field 1 repeats ``SentencePiece`` (piece, score, type), field 2 is the ``TrainerSpec``, 3 the
``NormalizerSpec``, 5 an optional ``denormalizer_spec``. Only the fields the encoder and decoder
need are kept; unknown fields and extensions are skipped by their wire type, as protobuf does.
Defaults are the schema's (``add_dummy_prefix`` true, ``model_type`` UNIGRAM, ...).

What this leaves out: writing models, and the fields only training uses.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from tokviz.core.errors import ModelFormatError

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


@dataclass
class ModelProto:
    """The parts of a ``.model`` file tokviz uses. `types` holds `NORMAL`, `UNKNOWN`, ..."""

    pieces: list[str]
    scores: list[float]  # float32 values, as stored
    types: list[int]
    trainer: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer: NormalizerSpec = field(default_factory=NormalizerSpec)
    denormalizer: NormalizerSpec | None = None

    @property
    def model_type(self) -> str:
        return MODEL_TYPES.get(self.trainer.model_type, f"type {self.trainer.model_type}")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise _Truncated
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ModelFormatError("a number in the file is longer than 10 bytes")


def _fields(data: bytes):
    """``(field number, wire type, value)`` of each field; LEN values are bytes, others ints."""
    pos, n = 0, len(data)
    while pos < n:
        key, pos = _varint(data, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            value, pos = _varint(data, pos)
        elif wt == 2:
            size, pos = _varint(data, pos)
            if pos + size > n:
                raise _Truncated
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


def _parse_pieces(chunks: list[bytes]) -> tuple[list[str], list[float], list[int]]:
    """The repeated ``SentencePiece`` messages; the common layout (piece, score, type, all short)
    is read inline, anything else through `_fields`."""
    pieces: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    unpack = _F32.unpack_from
    for k, msg in enumerate(chunks):
        n = len(msg)
        # fast path: 0A len piece 15 f32 [18 type]
        if n >= 2 and msg[0] == 0x0A and msg[1] < 0x80 and n in (msg[1] + 7, msg[1] + 9) \
                and msg[msg[1] + 2] == 0x15:
            end = msg[1] + 2
            piece = msg[2:end]
            score = unpack(msg, end + 1)[0]
            if n == end + 5:
                typ = NORMAL
            elif msg[end + 5] == 0x18 and msg[end + 6] < 0x80:
                typ = msg[end + 6]
            else:
                piece = None  # fall back
            if piece is not None:
                try:
                    pieces.append(piece.decode("utf-8"))
                except UnicodeDecodeError:
                    raise ModelFormatError(f"piece {k} is not valid UTF-8") from None
                scores.append(score)
                types.append(typ)
                continue
        text, score, typ = None, 0.0, NORMAL
        for num, wt, value in _fields(msg):
            if num == 1:
                text = _text(value, f"piece {k}")
            elif num == 2:
                if wt != 5:
                    raise ModelFormatError(f"the score of piece {k} is not a float")
                score = value  # type: ignore[assignment]
            elif num == 3:
                typ = _int32(value, f"the type of piece {k}")
        if text is None:
            raise ModelFormatError(f"piece {k} has no text")
        pieces.append(text)
        scores.append(score)
        types.append(typ)
    return pieces, scores, types


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


def _top_fields(data: bytes, chunks: list[bytes]):
    """The top-level fields, the pieces (field 1, hundreds of thousands) appended to `chunks` in a
    tight loop and the others yielded as `_fields` would."""
    pos, n = 0, len(data)
    while pos < n:
        if data[pos] == 0x0A:  # field 1, length-delimited: a SentencePiece
            b = data[pos + 1] if pos + 1 < n else 0x80
            if b < 0x80:
                size, p = b, pos + 2
            else:
                size, p = _varint(data, pos + 1)
            if p + size > n:
                raise _Truncated
            chunks.append(data[p : p + size])
            pos = p + size
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


def parse_model_proto(data: bytes) -> ModelProto:
    """Parse a serialized ``ModelProto``; a truncated or malformed one is a `ModelFormatError`."""
    chunks: list[bytes] = []
    trainer = normalizer = denormalizer = None
    try:
        for num, wt, value in _top_fields(data, chunks):
            if num in (1, 2, 3, 5) and wt != 2:
                raise ModelFormatError(f"field {num} has the wrong wire type")
            if num == 2:
                trainer = _parse_trainer(value)  # type: ignore[arg-type]
            elif num == 3:
                normalizer = _parse_normalizer(value)  # type: ignore[arg-type]
            elif num == 5:
                denormalizer = _parse_normalizer(value)  # type: ignore[arg-type]
        pieces, scores, types = _parse_pieces(chunks)
    except _Truncated:
        raise ModelFormatError("truncated SentencePiece model (the data ends inside a field)") from None
    if not pieces:
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
