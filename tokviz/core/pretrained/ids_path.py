"""The ids of an encoding without the encoding: what ``tokviz encode --ids`` prints.

``encode_ids_like(tok, text)`` equals ``tok.encode(text, allowed_special="all").ids`` (and with
``specials_as_text=True`` the ids of `encode_specials_as_text`), but the tokenizers that have an
ids path take it: no token bytes, no spans, no per-chunk byte offsets, and a big text may be
encoded in two processes when the caller allows them (``processes``: `processes_kw`). Tokens and
spans can be derived from the ids afterwards when they are wanted (`encode_once`: the whole
encoding of a one-off call).
What this leaves out: the encoders themselves (`rank_bpe`, `hf.tokenizer`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tokviz.core.special_tokens import added_tokens

from .rank_bpe import RankBpeTokenizer

_HF_MODULE = "tokviz.core.pretrained.hf.tokenizer"
_SPM_MODULE = "tokviz.core.pretrained.spm.tokenizer"


def processes_kw(tok, processes: int) -> dict:
    """``{"processes": processes}`` for a tokenizer whose encode methods can share a big text with
    forked children (tiktoken-style, sentencepiece's), ``{}`` for the others or for one process:
    the keywords to add to its ``encode``, ``encode_ordinary`` or ``encode_ids`` call."""
    if processes < 2:
        return {}
    spm = sys.modules.get(_SPM_MODULE)  # not loaded: `tok` is no sentencepiece model
    if isinstance(tok, RankBpeTokenizer) or (spm is not None and isinstance(tok, spm.SentencePieceTokenizer)):
        return {"processes": processes}
    return {}


def encode_ids_like(tok, text: str, *, step: int | None = None, specials_as_text: bool = False,
                    share_cache: bool = True, processes: int = 1) -> list[int]:
    """``tok.encode(text, step=step, allowed_special="all").ids`` by the cheapest exact path;
    with `specials_as_text`, the ids of ``encode_specials_as_text(tok, text, step=step)``.
    ``share_cache=False``: a one-off encode, whose caches need not be kept warm; `processes`:
    how many processes may encode a big text (`processes_kw`)."""
    if specials_as_text:
        allowed: list[str] | str = [t.content for t in added_tokens(tok) if not t.special]
        disallowed: tuple | str = ()
    else:
        allowed, disallowed = "all", ()
    if isinstance(tok, RankBpeTokenizer):
        return tok.encode_ids(text, step=step, allowed_special=allowed, disallowed_special=disallowed,
                              share_cache=share_cache, processes=processes)
    hf = sys.modules.get(_HF_MODULE)  # not loaded: `tok` is no tokenizer.json (and it stays unloaded)
    if hf is not None and isinstance(tok, hf.HfTokenizer):
        return tok.encode_ids(text, step=step, add_special_tokens=True, allowed_special=allowed,
                              disallowed_special=disallowed)
    return tok.encode(text, step=step, allowed_special=allowed, disallowed_special=disallowed,
                      **processes_kw(tok, processes)).ids


def encode_ids_text_like(tok, text: str, *, step: int | None = None, specials_as_text: bool = False,
                         processes: int = 1) -> str:
    """``ids_text(encode_ids_like(tok, text, ...), tok.n_vocab)`` for a one-off encode (the command
    line's ``--ids``); a tiktoken-style tokenizer writes each distinct chunk's ids once."""
    if not isinstance(tok, RankBpeTokenizer):
        ids = encode_ids_like(tok, text, step=step, specials_as_text=specials_as_text, share_cache=False,
                              processes=processes)
        return ids_text(ids, tok.n_vocab)
    if specials_as_text:
        allowed: list[str] | str = [t.content for t in added_tokens(tok) if not t.special]
    else:
        allowed = "all"
    return tok.encode_ids_text(text, step=step, allowed_special=allowed, disallowed_special=(), processes=processes)


def encode_once(tok, text: str, *, step: int | None = None, processes: int = 1):
    """``tok.encode(text, step=step, allowed_special="all")`` for a one-off encode (the command
    line) in up to `processes` processes: a big text's forked half keeps no cache warm for later
    calls that will not come."""
    if isinstance(tok, RankBpeTokenizer):
        return tok.encode(text, step=step, allowed_special="all", share_cache=False, processes=processes)
    return tok.encode(text, step=step, allowed_special="all", **processes_kw(tok, processes))


def write_json_once(tok, text: str, write, *, step: int | None = None, processes: int = 1) -> bool:
    """Write the JSON of `encode_once` (``json.dumps(enc.to_json())``) for a one-off encode and
    return True where a faster path applies (a tiktoken-style tokenizer, a big text and two
    `processes`: its two halves encoded and written by two processes); False (nothing written)
    otherwise."""
    return isinstance(tok, RankBpeTokenizer) and tok.write_json_once(text, write, step=step, processes=processes)


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
