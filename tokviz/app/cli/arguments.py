"""Command-line arguments that are not valid UTF-8: refused in one line, before any command runs.

On POSIX an argument is bytes; Python hands bytes that are not UTF-8 over as lone surrogates
(``"a\\udcffb"`` for ``a\\xffb``), which no tokenizer, file format or terminal can take as text.
Every argument is checked once, for every command; the exception is an argument that names a file
or folder that exists, since the system takes any bytes as a file name (the command then opens it).
Text to encode (``TEXT``) is checked even then.

What this leaves out: text read from files and stdin (``tokviz.core.text.corpus.decode_utf8``).
Also here: the argparse types and help texts several commands share.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from tokviz.core.errors import TokvizError

MODEL_HELP = ("a tokviz model (tokviz train -o), a tokenizer file or folder (tokenizer.json, .tiktoken, "
              "SentencePiece or minbpe .model, encoder.json + vocab.bpe), an encoding name such as cl100k_base "
              "(its file from $TOKVIZ_VOCAB_DIR or tiktoken's cache), or hf:ORG/NAME from the Hugging Face cache")


def whole_number(text: str) -> int:
    """An argparse type: a whole number >= 0 (`validate` of the settings has the last word)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def number(text: str) -> float:
    """An argparse type: any number."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


class ArgumentEncodingError(TokvizError):
    """An argument holds bytes that are not UTF-8."""


def _as_bytes(value: str) -> bytes:
    """The bytes an argument came from (POSIX: undoing surrogateescape)."""
    try:
        return os.fsencode(value)
    except UnicodeError:  # surrogates that are no escaped byte (a Windows argument)
        return value.encode("utf-8", "surrogatepass")


def _bad_byte(value: str) -> tuple[int, int] | None:
    """(first bad byte, its offset) of an argument, or None when it is valid UTF-8."""
    if value.isascii():
        return None
    data = _as_bytes(value)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data[exc.start], exc.start
    return None


def utf8_argument(value: str, what: str) -> str:
    """`value` if it is valid UTF-8, else `ArgumentEncodingError` naming `what` and the byte.

    >>> utf8_argument("naïve", "TEXT")
    'naïve'
    >>> try:
    ...     utf8_argument("a\\udcffb", "TEXT")
    ... except ArgumentEncodingError as exc:
    ...     print(exc)
    TEXT is not valid UTF-8 (first bad byte 0xFF at offset 1); arguments must be UTF-8 (convert other encodings first, e.g. with iconv)
    """
    bad = _bad_byte(value)
    if bad is None:
        return value
    byte, offset = bad
    raise ArgumentEncodingError(
        f"{what} is not valid UTF-8 (first bad byte 0x{byte:02X} at offset {offset}); arguments must be "
        f"UTF-8 (convert other encodings first, e.g. with iconv)"
    )


def check_arguments(argv: Sequence[str]) -> None:
    """Refuse the first argument that is not valid UTF-8 and names no existing file or folder."""
    for i, arg in enumerate(argv, start=1):
        if _bad_byte(arg) is not None and not os.path.lexists(arg):
            utf8_argument(arg, f"argument {i} ({repr(_as_bytes(arg))[2:-1]})")
