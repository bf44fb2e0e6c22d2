"""minbpe ``.model`` files (Karpathy's minbpe) as a `MergeList`.

Format ``minbpe v1``, the split pattern (empty: no split), the number of special tokens, one
``token id`` line per special token, then one ``left right`` line per merge (merge k makes id
256 + k). minbpe merges the lowest-ranked pair everywhere, left to right, which is exactly
the rule of tokviz's trained BPE (`tokviz.core.bpe`), so a minbpe model is encoded by it with minbpe's ids.
"""

from __future__ import annotations

import os
from pathlib import Path

from tokviz.core.errors import ModelFormatError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, read_file_bytes

from .descriptions import MergeList

HEADER = "minbpe v1"


def parse_minbpe(text: str, *, name: str = "minbpe", source: str | None = None) -> MergeList:
    """The `MergeList` of a minbpe model's text; `ModelFormatError` names what is wrong."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != HEADER:
        raise ModelFormatError(f"not a minbpe model (first line is not {HEADER!r})")
    try:
        pattern = lines[1].rstrip("\r")
        n_special = int(lines[2].strip())
        specials: dict[str, int] = {}
        for line in lines[3 : 3 + n_special]:
            tok, idx = line.strip().rsplit(None, 1)
            specials[tok] = int(idx)
        merges = []
        for no, line in enumerate(lines[3 + n_special :], 4 + n_special):
            if not line.strip():
                continue
            a, b = map(int, line.split())
            n = 256 + len(merges)
            if not (0 <= a < n and 0 <= b < n):
                raise ModelFormatError(f"line {no}: merge ({a}, {b}) refers to an id not made yet")
            merges.append((a, b))
    except (IndexError, ValueError):
        raise ModelFormatError("corrupt minbpe model (malformed lines)") from None
    return MergeList(tuple(merges), pattern, specials, name, source)


def read_minbpe(path: str | os.PathLike) -> MergeList:
    path = Path(path)
    data = read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path}: cannot read ({exc})") from None
    try:
        return parse_minbpe(text, name=path.stem, source=str(path))
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None
