"""GPT-2's original release files, ``encoder.json`` + ``vocab.bpe``, as a `RankedVocab` (tiktoken's rule).

As tiktoken's ``data_gym_to_mergeable_bpe_ranks``: the 256 single bytes come first (printable
characters in order, then the rest, as GPT-2's byte-to-character table has them), then one token
per line of ``vocab.bpe`` in order. ``encoder.json`` must agree with those ranks (the same check
tiktoken makes). The result has r50k_base's ranks, split pattern and ``<|endoftext|>``.
"""

from __future__ import annotations

import os
from pathlib import Path

import regex

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, parse_json, read_file_bytes

from .descriptions import RankedVocab
from .openai_encodings import ENDOFTEXT, KNOWN_ENCODINGS


def _byte_tables() -> tuple[list[int], dict[str, int]]:
    order = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    char_byte = {chr(b): b for b in order}
    n = 0
    for b in range(256):
        if b not in order:
            order.append(b)
            char_byte[chr(256 + n)] = b
            n += 1
    return order, char_byte


def _read(path: Path) -> str:
    data = read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path}: cannot read ({exc})") from None


def data_gym_ranks(vocab_bpe: str, encoder_json: str | None = None, *, source: str = "vocab.bpe",
                   encoder_source: str = "encoder.json") -> dict[bytes, int]:
    """``{token bytes: rank}`` from the texts of ``vocab.bpe`` (and ``encoder.json`` to check);
    `source` and `encoder_source` name the files in errors."""
    order, char_byte = _byte_tables()
    valid = "".join(regex.escape(c) for c in char_byte)
    to_latin1 = {ord(c): b for c, b in char_byte.items()}
    lines = vocab_bpe.split("\n")
    if not lines or not lines[0].startswith("#version"):
        raise ModelFormatError(f"{source}: not a GPT-2 vocab.bpe (no '#version' first line)")
    # checked once and mapped in C, a line at a time: a loop over each token's characters took
    # most of GPT-2's load
    bad = regex.compile(f"[^{valid}\\s]").search(vocab_bpe, len(lines[0]))
    if bad is not None:
        line = vocab_bpe[vocab_bpe.rfind("\n", 0, bad.start()) + 1:].split("\n", 1)[0]
        word = next(w for w in line.split() if bad.group() in w)
        raise ModelFormatError(f"{source}: {word!r} has a character outside GPT-2's byte table ({bad.group()!r})")
    ranks = {bytes([b]): i for i, b in enumerate(order)}
    for no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ModelFormatError(f"{source}: line {no} is not 'left right': {line[:60]!r}")
        ranks[(parts[0] + parts[1]).translate(to_latin1).encode("latin-1")] = len(ranks)
    if encoder_json is not None:
        enc = parse_json(encoder_json, encoder_source, ModelFormatError)
        if not isinstance(enc, dict):
            raise ModelFormatError("encoder.json: expected an object of token -> id")
        keys = [k for k in enc if k not in (ENDOFTEXT, "<|startoftext|>")]
        bad = regex.compile(f"[^{valid}]").search("".join(keys))
        if bad is not None:
            word = next(k for k in keys if bad.group() in k)
            raise ModelFormatError(f"{encoder_source}: {word!r} has a character outside GPT-2's byte table "
                                   f"({bad.group()!r})")
        loaded = {k.translate(to_latin1).encode("latin-1"): enc[k] for k in keys}
        if loaded != ranks:
            raise ModelFormatError(
                "encoder.json and vocab.bpe disagree (the ids of encoder.json are not the merge "
                "order of vocab.bpe); use the two files of the same release"
            )
    return ranks


def read_data_gym(vocab_bpe: str | os.PathLike, encoder_json: str | os.PathLike | None = None) -> RankedVocab:
    """GPT-2 from ``vocab.bpe`` (and, when given or next to it, ``encoder.json``)."""
    vocab_bpe = Path(vocab_bpe)
    if encoder_json is None and (vocab_bpe.parent / "encoder.json").is_file():
        encoder_json = vocab_bpe.parent / "encoder.json"
    enc_text = _read(Path(encoder_json)) if encoder_json is not None else None
    ranks = data_gym_ranks(_read(vocab_bpe), enc_text, source=str(vocab_bpe), encoder_source=str(encoder_json))
    specials = {ENDOFTEXT: len(ranks)}  # GPT-2: 50256, right after the merges
    if enc_text is not None:
        enc = parse_json(enc_text, str(encoder_json), ModelFormatError)
        eot = enc.get(ENDOFTEXT) if isinstance(enc, dict) else None
        if isinstance(eot, int):
            specials = {ENDOFTEXT: eot}
    return RankedVocab(ranks, KNOWN_ENCODINGS["gpt2"].pattern, specials, "gpt2", str(vocab_bpe))
