"""Whether a token is reachable: whether encoding its own text gives it back (glitch tokens).

`text_reason` is the check of a tokenizer whose tokens are text: decode the token's bytes and
encode them again. A tokenizer.json model answers on its own terms (``HfBpeModel.unreachable``:
do the token's own symbols merge back into it), some with `pipeline_reason` (does the whole
pipeline keep the token's string one token). Unigram models are checked on their lattice,
normalizer included, all at once (`tokviz.core.explain.unigram.unreachable_pieces`).
"""

from __future__ import annotations

Reason = tuple[str, tuple[int, ...]]  # (why, the ids the token's text encodes to)


def text_reason(tok, token_id: int) -> Reason | None:
    """Why encoding token `token_id`'s own text does not give it back: ``"partial_utf8"`` (its
    bytes are not text on their own), ``"split"`` (the pre-tokenizer cuts the text) or
    ``"merge"`` (the merges end in other tokens); None when it does."""
    try:
        text = tok.token_bytes(token_id).decode("utf-8")
    except UnicodeDecodeError:
        return "partial_utf8", ()
    got = tok.encode_ids(text)
    if got == [token_id]:
        return None
    return "split" if len(tok.chunks(text)) > 1 else "merge", tuple(got)


def pipeline_reason(tok, token_id: int, text: str) -> Reason | None:
    """Why `tok` does not encode `text` (token `token_id`'s string, as its vocabulary writes it)
    to that token alone: ``"split"`` (the pre-tokenizer cuts it) or ``"normalized"``; None when it
    does (tokenizer.json WordPiece and WordLevel models)."""
    got = tok.encode_ids(text)
    if got == [token_id]:
        return None
    return "split" if len(tok.chunks(text)) > 1 else "normalized", tuple(got)
