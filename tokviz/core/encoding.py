"""`Encoding`: the result of encoding a text, with everything a view needs to draw it.

Ids, token bytes and character spans travel together (as in HF tokenizers' `Encoding`), so the
token view never re-derives positions by decoding tokens one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Encoding:
    """Ids of a text with each token's bytes and character span ``(start, end)`` in the input.

    A token holding only part of a character (byte-level BPE on emoji or CJK) has the span of
    the whole character, so neighbouring partial tokens share a span. Tokens made only of an
    end-of-word marker have an empty span at the end of their chunk.
    """

    ids: list[int]
    tokens: list[bytes]
    spans: list[tuple[int, int]]
    unknown: list[int] = field(default_factory=list)  # indices of [UNK] tokens (lossy positions)
    special: list[int] = field(default_factory=list)  # indices of special tokens
    dropped: list[tuple[int, int]] = field(default_factory=list)  # text no chunk covers

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def lossless(self) -> bool:
        """True when decoding gives back the text: nothing unknown, nothing dropped."""
        return not self.unknown and not self.dropped

    def to_json(self) -> dict:
        """``{"ids": [...], "tokens_hex": [...], "spans": [[start, end], ...]}``."""
        return {
            "ids": list(self.ids),
            "tokens_hex": [t.hex() for t in self.tokens],
            "spans": [list(s) for s in self.spans],
        }


def uncovered(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """Gaps of ``[0, length)`` not covered by the sorted `spans`.

    >>> uncovered([(0, 2), (3, 4)], 6)
    [(2, 3), (4, 6)]
    """
    gaps = []
    pos = 0
    for a, b in spans:
        if a > pos:
            gaps.append((pos, a))
        pos = max(pos, b)
    if pos < length:
        gaps.append((pos, length))
    return gaps
