"""Helpers for the SentencePiece tests: models trained with the `sentencepiece` library at test time
(cached for the session), and a small protobuf writer for hand-made models.

The trained models: ``unigram-nmt`` (Unigram, ``nmt_nfkc``), ``unigram-identity`` (Unigram, no
normalization), ``bpe-bytes`` (BPE with byte fallback, spaces kept), all on every 10th line of
``udhr2_all.txt`` with 2000 pieces; `MISTRAL` is the shared Llama-style BPE model.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.conftest import shared_build, shared_file

TRAINED = {
    "unigram-nmt": dict(model_type="unigram", normalization_rule_name="nmt_nfkc"),
    "unigram-identity": dict(model_type="unigram", normalization_rule_name="identity"),
    "bpe-bytes": dict(model_type="bpe", byte_fallback=True, normalization_rule_name="identity",
                      remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, split_digits=True,
                      character_coverage=0.99),
}
_BUILT: dict[str, Path] = {}


def mistral_model() -> Path:
    return shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model")


def corpus_lines(step: int = 10) -> list[str]:
    text = shared_file("corpora", "udhr2_all.txt").read_text(encoding="utf-8")
    return text.split("\n")[::step]


def trained_model(name: str, folder: Path) -> Path:
    """The model `name` of `TRAINED`, trained once per run (`shared_build`; in `folder` outside a test run)."""
    if name not in _BUILT:
        spm = pytest.importorskip("sentencepiece")

        def train(into: Path) -> Path:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(corpus_lines()), model_prefix=str(into / name), vocab_size=2000,
                minloglevel=2, num_threads=2, **TRAINED[name])
            return into / f"{name}.model"

        _BUILT[name] = shared_build(f"{name}.model", train, folder)
    return _BUILT[name]


# -- a protobuf writer for hand-made models ------------------------------------------------------------


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num: int, value) -> bytes:
    if isinstance(value, bool) or isinstance(value, int):
        return _varint(num << 3) + _varint(int(value))
    if isinstance(value, float):
        return _varint(num << 3 | 5) + struct.pack("<f", value)
    data = value.encode("utf-8") if isinstance(value, str) else value
    return _varint(num << 3 | 2) + _varint(len(data)) + data


TRAINER_FIELDS = {"model_type": 3, "vocab_size": 4, "byte_fallback": 35, "treat_whitespace_as_suffix": 24,
                  "unk_id": 40, "unk_surface": 44, "unk_piece": 45}
NORMALIZER_FIELDS = {"name": 1, "precompiled_charsmap": 2, "add_dummy_prefix": 3, "remove_extra_whitespaces": 4,
                     "escape_whitespaces": 5}
TYPES = {"normal": 1, "unknown": 2, "control": 3, "user": 4, "unused": 5, "byte": 6}


def model_bytes(pieces, *, trainer: dict | None = None, normalizer: dict | None = None) -> bytes:
    """A serialized ModelProto: `pieces` are ``(piece, score, type name)``."""
    out = bytearray()
    for piece, score, kind in pieces:
        msg = _field(1, piece) + _field(2, float(score)) + _field(3, TYPES[kind])
        out += _field(1, msg)
    tr = b"".join(_field(TRAINER_FIELDS[k], v) for k, v in (trainer or {}).items())
    out += _field(2, tr)
    no = b"".join(_field(NORMALIZER_FIELDS[k], v) for k, v in (normalizer or {"name": "identity"}).items())
    out += _field(3, no)
    return bytes(out)


def write_model(path: Path, pieces, **kw) -> Path:
    path.write_bytes(model_bytes(pieces, **kw))
    return path


def tied_lattice():
    """A float32 lattice whose pieces tie in exact sums (``ab`` = ``a`` + ``b``, ...) with scores
    that float32 rounds differently at large accumulated scores: which path wins depends on the
    score before the segment, so exact replays often differ from the cached path."""
    from tests.jit_switch import jit_off
    from tokviz.core.unigram.encoder.lattice import F32_SP, PieceLattice, f32

    u = 2.0 ** -10  # a quarter of float32's ulp between 32768 and 65536
    a, b, c = -4.0 - 3 * u, -8.0 - 5 * u, -2.0 - 7 * u
    scores = {"\u2581": -0.5, "a": a, "b": b, "c": c, "ab": a + b, "bc": b + c, "abc": a + b + c,
              "\u2581a": -0.5 + a, "\u2581ab": -0.5 + a + b, "ca": c + a, "cab": c + a + b, "bca": b + c + a}
    assert all(f32(v) == v for v in scores.values())  # every sum is a float32: the ties are exact
    pieces = ["<unk>", *scores]
    with jit_off():
        return PieceLattice(pieces, [0.0, *scores.values()], mode=F32_SP, edge_ids=range(1, len(pieces)), unk_id=0)
