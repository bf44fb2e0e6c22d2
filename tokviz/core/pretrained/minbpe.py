"""minbpe ``.model`` files (Karpathy's minbpe) as a tokviz `BpeTokenizer`.

Format ``minbpe v1``, the split pattern (empty: no split), the number of special tokens, one
``token id`` line per special token, then one ``left right`` line per merge (merge k makes id
256 + k). minbpe merges the lowest-ranked pair everywhere, left to right, which is exactly
`BpeTokenizer`'s rule, so the ids are minbpe's.
"""

from __future__ import annotations

import os
from pathlib import Path

from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.bpe.units import BaseVocab
from tokviz.core.errors import ModelFormatError, SplitError
from tokviz.core.io.safe_files import MAX_MODEL_BYTES, read_file_bytes
from tokviz.core.text.split import SPLIT_PRESETS, Splitter, parse_split

HEADER = "minbpe v1"


def _splitter(pattern: str) -> Splitter:
    if not pattern:
        return parse_split("none")
    for name, preset in SPLIT_PRESETS.items():
        if preset == pattern:
            return parse_split(name)
    try:
        return parse_split("regex:" + pattern)
    except SplitError as exc:
        raise ModelFormatError(f"the model's split pattern cannot be used: {exc}") from None


def parse_minbpe(text: str, *, name: str = "minbpe") -> BpeTokenizer:
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
    return BpeTokenizer(BaseVocab("bytes"), merges, _splitter(pattern), special_tokens=specials, name=name)


def load_minbpe(path: str | os.PathLike) -> BpeTokenizer:
    path = Path(path)
    data = read_file_bytes(path, limit=MAX_MODEL_BYTES, error=ModelFormatError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path}: cannot read ({exc})") from None
    try:
        tok = parse_minbpe(text, name=path.stem)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None
    tok.source = str(path)  # type: ignore[attr-defined]
    return tok
