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

from collections.abc import Sequence

from tokviz.core.special_tokens import added_tokens


def processes_kw(tok, processes: int) -> dict:
    """``{"processes": processes}`` for a tokenizer whose encode methods can share a big text with
    forked children (tiktoken-style, sentencepiece's), ``{}`` for the others or for one process:
    the keywords to add to its ``encode``, ``encode_ordinary`` or ``encode_ids`` call."""
    return {"processes": processes} if processes >= 2 and tok.takes_processes else {}


def _cache_kw(tok, share_cache: bool) -> dict:
    """``{"share_cache": share_cache}`` for a tokenizer whose ``encode`` takes it (`one_off_paths`)."""
    return {"share_cache": share_cache} if tok.one_off_paths else {}


def encode_ids_like(tok, text: str, *, step: int | None = None, specials_as_text: bool = False,
                    share_cache: bool = True, processes: int = 1) -> list[int]:
    """``tok.encode(text, step=step, allowed_special="all").ids`` by the cheapest exact path;
    with `specials_as_text`, the ids of ``encode_specials_as_text(tok, text, step=step)``.
    ``share_cache=False``: a one-off encode, whose caches need not be kept warm; `processes`:
    how many processes may encode a big text (`processes_kw`). The tokenizers with an ids path
    (tiktoken-style, tokenizer.json) make the ids of their `encode` first and nothing else until
    another field is read."""
    allowed = _allowed(tok, specials_as_text)
    return tok.encode(text, step=step, allowed_special=allowed, disallowed_special=(),
                      **_cache_kw(tok, share_cache), **processes_kw(tok, processes)).ids


def _allowed(tok, specials_as_text: bool) -> list[str] | str:
    """The special tokens to recognise: all, or with `specials_as_text` only the added tokens that
    are not special (`encode_specials_as_text`)."""
    return [t.content for t in added_tokens(tok) if not t.special] if specials_as_text else "all"


def encode_ids_text_like(tok, text: str, *, step: int | None = None, specials_as_text: bool = False,
                         processes: int = 1) -> str:
    """``ids_text(encode_ids_like(tok, text, ...), tok.n_vocab)`` for a one-off encode (the command
    line's ``--ids``); a tiktoken-style tokenizer writes each distinct chunk's ids once."""
    if tok.one_off_paths:
        return tok.encode_ids_text(text, step=step, allowed_special=_allowed(tok, specials_as_text),
                                   disallowed_special=(), processes=processes)
    ids = encode_ids_like(tok, text, step=step, specials_as_text=specials_as_text, share_cache=False,
                          processes=processes)
    return ids_text(ids, tok.n_vocab)


def encode_once(tok, text: str, *, step: int | None = None, processes: int = 1):
    """``tok.encode(text, step=step, allowed_special="all")`` for a one-off encode (the command
    line) in up to `processes` processes: a big text's forked half keeps no cache warm for later
    calls that will not come."""
    return tok.encode(text, step=step, allowed_special="all", **_cache_kw(tok, False), **processes_kw(tok, processes))


def write_json_once(tok, text: str, write, *, step: int | None = None, processes: int = 1) -> bool:
    """Write the JSON of `encode_once` (``json.dumps(enc.to_json())``) for a one-off encode and
    return True where a faster path applies (a tiktoken-style tokenizer, a big text and two
    `processes`: its two halves encoded and written by two processes); False (nothing written)
    otherwise."""
    return tok.one_off_paths and tok.write_json_once(text, write, step=step, processes=processes)


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
