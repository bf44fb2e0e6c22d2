"""Whether tokens keep UTF-8 characters whole: per vocabulary id, and per character of a text.

The definitions are those of swiss-ai/tokenizer-intrinsic-evals (``metrics/utf8_integrity.py``):

- a token is *whole* when its bytes decode as complete, valid UTF-8 (``utf8_whole_token_rate``:
  the share of such tokens);
- a token *crosses a character boundary* when its bytes hold pieces of two or more characters and
  at least one of them is incomplete (``b"\\xa9\\xe4"``: the tail of one character, the lead of
  the next); a lone byte never does (``utf8_boundary_crossing_rate``);
- a multi-byte character of the text is *split* when two or more tokens share its bytes
  (``utf8_split_char_rate``: split characters over multi-byte characters).

Where tokviz differs: every token counts (the source leaves special tokens out; a compared text
is encoded as plain text, so none occur), and a character's tokens come from exact positions
(`tokens.TokenPositions`), not from aligning the decoded tokens with the text. What this leaves
out: counting over documents (`tallies`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .text import TextFacts


def _sequence_length(lead: int) -> int:
    """Bytes a character starting with byte `lead` takes (0: not a lead byte)."""
    if lead < 0x80:
        return 1
    if lead < 0xC0:
        return 0
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4 if lead < 0xF8 else 0


def crosses_character_boundary(data: bytes) -> bool:
    """Whether `data` holds pieces of two or more characters, one of them incomplete.

    >>> crosses_character_boundary(b"\\xa9\\xe4"), crosses_character_boundary(b"\\xe4"), crosses_character_boundary("é".encode())
    (True, False, False)
    >>> crosses_character_boundary(b"a\\xe4\\xbd")  # "a" and the first two bytes of "你"
    True
    """
    pieces, incomplete, i = 0, False, 0
    while i < len(data):
        need = _sequence_length(data[i])
        got = 1
        while got < need and i + got < len(data) and 0x80 <= data[i + got] <= 0xBF:
            got += 1
        pieces += 1
        incomplete = incomplete or got < need or need == 0
        i += got
    return pieces > 1 and incomplete


@dataclass(frozen=True, eq=False)
class Utf8Tables:
    """Per vocabulary id: whether its bytes are whole UTF-8 and whether they cross a boundary."""

    whole: np.ndarray  # (n_vocab,) bool
    crossing: np.ndarray  # (n_vocab,) bool


def utf8_tables(vocab: list[bytes]) -> Utf8Tables:
    """The two per-id tables of a vocabulary (the bytes of every id).

    >>> t = utf8_tables([b"a", b"\\xc3", b"\\xa9\\xe4", "é".encode()])
    >>> t.whole.tolist(), t.crossing.tolist()
    ([True, False, False, True], [False, False, True, False])
    """
    whole = np.ones(len(vocab), dtype=bool)
    crossing = np.zeros(len(vocab), dtype=bool)
    for i, b in enumerate(vocab):
        if b.isascii():
            continue
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            whole[i] = False
            crossing[i] = crosses_character_boundary(b)
    return Utf8Tables(whole, crossing)


def multibyte_splits(facts: TextFacts, overlaps: Callable[[np.ndarray, np.ndarray], np.ndarray],
                     in_bytes: bool) -> tuple[np.ndarray, np.ndarray]:
    """The multi-byte characters of a text (char offsets) and whether each is split, given how
    many tokens overlap spans of it (`text.Overlaps` of the tokens' positions, in bytes, or in
    chars when not `in_bytes`).

    >>> from tokviz.core.compare.text import Overlaps, text_facts
    >>> f = text_facts("aé你")  # bytes: a | c3 a9 | e4 bd a0
    >>> c, split = multibyte_splits(f, Overlaps(np.array([0, 1, 3, 5]), np.array([1, 3, 5, 6])), True)
    >>> c.tolist(), split.tolist()
    ([1, 2], [False, True])
    """
    cb = facts.char_bytes
    chars = facts.multibyte_chars  # (multibyte,) char offsets
    if in_bytes:
        lo, hi = cb[chars], cb[chars + 1]
    else:
        lo, hi = chars, chars + 1
    return chars, overlaps(lo, hi) >= 2
