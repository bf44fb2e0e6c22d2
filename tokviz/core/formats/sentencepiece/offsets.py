"""The offsets `sentencepiece` reports for an encoding (``encode_as_offset_mapping``'s, the
``begin``/``end`` of its proto pieces in characters), made from tokviz's spans.

sentencepiece maps each piece's start and end in the normalized text back to the input, so a piece
ending inside what one input character became (a byte-fallback piece before the character's last
byte, ``f`` of an ``ﬁ`` NFKC made ``fi``) ends where it starts, and the last such piece covers the
whole character; tokviz gives every one of them the character's span (only inserted tokens are
empty). What it leaves out: BOS/EOS (sentencepiece's ``encode`` adds none).
"""

from __future__ import annotations

from tokviz.core.encoding import Encoding


def sentencepiece_offsets(enc: Encoding) -> list[tuple[int, int]]:
    """Each piece ends where the next one starts when they share a character.

    >>> sentencepiece_offsets(Encoding([1, 2, 3], [b"\\xf0\\x9f", b"\\x91\\x8b", b"!"], [(0, 1), (0, 1), (1, 2)]))
    [(0, 0), (0, 1), (1, 2)]
    """
    spans = enc.spans
    out = []
    for i, (a, b) in enumerate(spans):
        if i + 1 < len(spans) and a <= spans[i + 1][0] < b:
            b = spans[i + 1][0]
        out.append((a, b))
    return out
