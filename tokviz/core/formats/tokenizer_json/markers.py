"""Cutting a word at its ``▁`` word markers before BPE (tokenizer.json files that replace spaces
by ``▁`` and have no pre-tokenizer, such as Mistral's: a whole sentence is one word).

When no merge joins a token not ending in ``▁`` to one starting with it (`marker_is_boundary`),
BPE never joins across the point before a ``▁`` that follows another character, so the word can
be cut there and each piece encoded (and cached) alone with the same tokens (`model_word_ids`).
What this leaves out: the models (`models`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import chain
from operator import itemgetter

from tokviz.core.formats.tokenizer_json.components import contains
from tokviz.core.formats.tokenizer_json.decoders import MetaspaceDecoder, ReplaceDecoder, SequenceDecoder

MARKER = "\u2581"
_CUTS = re.compile("[^\u2581](?=\u2581)")  # a word may be cut after each match
_PIECES = re.compile("\u2581*[^\u2581]+|\u2581+")  # the pieces between those cuts
_FIRST = itemgetter(0)
Tokenize = Callable[[str, int], Sequence[tuple[int, int, int]]]  # (word, limit) -> (id, start, end) tokens


def uses_marker(decoder) -> bool:
    """True when the decoder turns ``▁`` back into spaces (a Metaspace decoder, or a Replace of
    ``▁``), so tokens show ``▁`` as a space."""
    if contains(decoder, (MetaspaceDecoder,)):
        return True
    parts = decoder.parts if isinstance(decoder, SequenceDecoder) else [decoder]
    return any(isinstance(p, ReplaceDecoder) and p.pattern.literal == MARKER for p in parts)


def marker_is_boundary(merge_pairs: Sequence[tuple[int, int]], strings: Sequence[str | None]) -> bool:
    """True when no merge joins a token not ending in ``▁`` to one starting with it."""
    for a, b in merge_pairs:
        left, right = strings[a] or "", strings[b] or ""
        if right.startswith(MARKER) and not left.endswith(MARKER):
            return False
    return True


def marker_cuts_exact(model, strings: Sequence[str | None]) -> bool:
    """True when cutting words at their ``▁`` markers gives `model`'s own tokens: a BPE whose
    merges never cross the cut (`marker_is_boundary`) and that sees nothing else of where a word
    ends or starts (an end-of-word suffix goes on a word's last character, a continuing prefix on
    all but its first; dropping merges for a word in the vocabulary looks at the whole word; and
    fused unknowns would fuse across the cut)."""
    if not model.lists_merges or model.prefix or model.suffix or model.ignore_merges:
        return False
    if model.fuse_unk and not model.byte_fallback:
        return False
    return marker_is_boundary(model.merge_pairs, strings)


def marker_cuts(word: str) -> list[int] | None:
    """``[0, cut, ..., len(word)]``: the places before each ``▁`` that follows another
    character, or None when there is none.

    >>> marker_cuts("\u2581a\u2581\u2581b"), marker_cuts("\u2581ab")
    ([0, 2, 5], None)
    """
    if MARKER not in word:
        return None
    cuts = [m.end() for m in _CUTS.finditer(word)]
    return [0, *cuts, len(word)] if cuts else None


def marker_pieces(texts: list[str]) -> list[str]:
    """Each text cut where `marker_cuts` cuts it, as plain strings (the ids path's words when
    there is no pre-tokenizer); nothing for an empty text.

    >>> marker_pieces(["\u2581a\u2581\u2581b", "\u2581ab"])
    ['\u2581a', '\u2581\u2581b', '\u2581ab']
    """
    findall = _PIECES.findall
    return [p for t in texts for p in findall(t)]


def cut_tokens(tokenize: Tokenize, word: str, cuts: list[int], limit: int) -> list[tuple[int, int, int]]:
    """The tokens of `word` cut at `cuts`, each piece by `tokenize`, positions in `word`."""
    out = list(tokenize(word[: cuts[1]], limit))
    for a, b in zip(cuts[1:], cuts[2:]):
        out.extend([(i, s + a, e + a) for i, s, e in tokenize(word[a:b], limit)])
    return out


def cut_ids(tokenize: Tokenize, word: str, cuts: list[int], limit: int) -> list[int]:
    """The ids of `cut_tokens`."""
    return [t[0] for t in chain.from_iterable(tokenize(word[a:b], limit) for a, b in zip(cuts, cuts[1:]))]


def model_word_ids(model, cut_marker: bool, word: str, limit: int, *, kept: bool = False) -> list[int]:
    """The ids `model` gives a pre-tokenized `word` (cut at its ``▁`` first when `cut_marker`); when
    the caller keeps them (`kept`), the model makes them without spans (BPE: or a cache entry)."""
    cuts = marker_cuts(word) if cut_marker else None
    if cuts is None:
        return model.tokenize_ids(word, limit) if kept else list(map(_FIRST, model.tokenize(word, limit)))
    return cut_ids(model.tokenize, word, cuts, limit)
