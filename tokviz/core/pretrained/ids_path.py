"""The ids of an encoding without the encoding: what ``tokviz encode --ids`` prints.

``encode_ids_like(tok, text)`` equals ``tok.encode(text, allowed_special="all").ids`` (and with
``specials_as_text=True`` the ids of `encode_specials_as_text`), but the tokenizers that have an
ids path take it: no token bytes, no spans, no per-chunk byte offsets, and a big text may be
encoded in two processes (`tokviz.core.processes.halves`). Tokens and spans can be derived from
the ids afterwards when they are wanted (`encode_once`: the whole encoding of a one-off call).
What this leaves out: the encoders themselves (`rank_bpe`, `hf.tokenizer`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tokviz.core.special_tokens import added_tokens

from .rank_bpe import RankBpeTokenizer

_HF_MODULE = "tokviz.core.pretrained.hf.tokenizer"


def encode_ids_like(tok, text: str, *, step: int | None = None, specials_as_text: bool = False,
                    share_cache: bool = True) -> list[int]:
    """``tok.encode(text, step=step, allowed_special="all").ids`` by the cheapest exact path;
    with `specials_as_text`, the ids of ``encode_specials_as_text(tok, text, step=step)``.
    ``share_cache=False``: a one-off encode, whose caches need not be kept warm."""
    if specials_as_text:
        allowed: list[str] | str = [t.content for t in added_tokens(tok) if not t.special]
        disallowed: tuple | str = ()
    else:
        allowed, disallowed = "all", ()
    if isinstance(tok, RankBpeTokenizer):
        return tok.encode_ids(text, step=step, allowed_special=allowed, disallowed_special=disallowed,
                              share_cache=share_cache)
    hf = sys.modules.get(_HF_MODULE)  # not loaded: `tok` is no tokenizer.json (and it stays unloaded)
    if hf is not None and isinstance(tok, hf.HfTokenizer):
        return tok.encode_ids(text, step=step, add_special_tokens=True, allowed_special=allowed,
                              disallowed_special=disallowed)
    return tok.encode(text, step=step, allowed_special=allowed, disallowed_special=disallowed).ids


def encode_ids_text_like(tok, text: str, *, step: int | None = None, specials_as_text: bool = False) -> str:
    """``ids_text(encode_ids_like(tok, text, ...), tok.n_vocab)`` for a one-off encode (the command
    line's ``--ids``); a tiktoken-style tokenizer writes each distinct chunk's ids once."""
    if not isinstance(tok, RankBpeTokenizer):
        ids = encode_ids_like(tok, text, step=step, specials_as_text=specials_as_text, share_cache=False)
        return ids_text(ids, tok.n_vocab)
    if specials_as_text:
        allowed: list[str] | str = [t.content for t in added_tokens(tok) if not t.special]
    else:
        allowed = "all"
    return tok.encode_ids_text(text, step=step, allowed_special=allowed, disallowed_special=())


def encode_once(tok, text: str, *, step: int | None = None):
    """``tok.encode(text, step=step, allowed_special="all")`` for a one-off encode (the command
    line): a big text's forked half keeps no cache warm for later calls that will not come."""
    if isinstance(tok, RankBpeTokenizer):
        return tok.encode(text, step=step, allowed_special="all", share_cache=False)
    return tok.encode(text, step=step, allowed_special="all")


def write_json_once(tok, text: str, write, *, step: int | None = None) -> bool:
    """Write the JSON of `encode_once` (``json.dumps(enc.to_json())``) for a one-off encode and
    return True where a faster path applies (a tiktoken-style tokenizer and a big text: its two
    halves encoded and written by two processes); False (nothing written) otherwise."""
    return isinstance(tok, RankBpeTokenizer) and tok.write_json_once(text, write, step=step)


def ids_text(ids: Sequence[int], n_vocab: int) -> str:
    """The ids written as decimal numbers separated by spaces (one string; for many ids the
    numbers are looked up in a table of the vocabulary's names instead of formatted one by one)."""
    if len(ids) < n_vocab // 4:
        return " ".join(map(str, ids))
    names = [str(i) for i in range(n_vocab)]
    try:
        return " ".join(map(names.__getitem__, ids))
    except (IndexError, TypeError):  # an id beyond the table (or not an index): format each one
        return " ".join(map(str, ids))
