"""Token offsets as a reference library reports them (``tokviz encode --json --offsets ...``).

tokviz draws from its own spans (`tokviz.core.encoding.Encoding`); a program comparing against
`tokenizers`, `sentencepiece` or `tiktoken` wants theirs: ``hf`` (``Encoding.offsets``: character
``(start, end)`` pairs) for a tokenizer.json, ``sentencepiece`` (``encode_as_offset_mapping``'s
pairs) for a SentencePiece model, ``tiktoken`` (``decode_with_offsets``: each token's start in the
decoded text) for any tokenizer. Each format's rule lives with that format.
"""

from __future__ import annotations

from tokviz.core.encoding import Encoding, offsets_of
from tokviz.core.errors import TokvizError

OFFSET_CONVENTIONS = ("hf", "sentencepiece", "tiktoken")


def reference_offsets(tokenizer, enc: Encoding, convention: str, *, text: str | None = None,
                      step: int | None = None) -> list:
    """`enc`'s offsets in `convention` (one of `OFFSET_CONVENTIONS`): ``[start, end]`` pairs, or
    for ``tiktoken`` the start of each token. ``hf`` needs `text` (encoded at merge `step`) where
    a normalizer composes or reorders characters (see `tokenizer_json.offsets`)."""
    if convention == "tiktoken":
        return offsets_of(enc.tokens)[1]
    if convention == "hf":
        from tokviz.core.formats.tokenizer_json.offsets import hf_offsets
        from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer

        if isinstance(tokenizer, HfTokenizer):
            return [list(s) for s in hf_offsets(tokenizer, enc, text, step=step)]
    elif convention == "sentencepiece":
        from tokviz.core.formats.sentencepiece.offsets import sentencepiece_offsets
        from tokviz.core.formats.sentencepiece.tokenizer import SentencePieceTokenizer

        if isinstance(tokenizer, SentencePieceTokenizer):
            return [list(s) for s in sentencepiece_offsets(enc)]
    else:
        raise TokvizError(f"unknown offsets {convention!r}; choose one of {', '.join(OFFSET_CONVENTIONS)}")
    kind = {"hf": "a tokenizer.json", "sentencepiece": "a SentencePiece .model"}[convention]
    raise TokvizError(f"--offsets {convention} needs {kind} tokenizer ({tokenizer.name} "
                      f"is not); --offsets tiktoken works with any")
