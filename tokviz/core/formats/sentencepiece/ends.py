"""The BOS/EOS a file declares around every encoded text, for SentencePiece-style models read from
another format's metadata (a GGUF ``llama`` or ``t5`` vocabulary).

A ``.model`` file leaves BOS and EOS to the caller (``SentencePieceProcessor.encode`` adds none),
but llama.cpp's ``llama_tokenize(..., add_special=true)`` puts the file's BOS first when
``tokenizer.ggml.add_bos_token`` says so (the default for llama vocabularies) and its EOS last
when ``add_eos_token`` does (the default for t5). What this leaves out: the encoding itself.
"""

from __future__ import annotations

from collections.abc import Callable

from tokviz.core.encoding import Encoding
from tokviz.core.formats.descriptions import Declared


def declared_ends(declared: Declared | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids put before and after every text: ``((bos,), (eos,))`` as the file declares."""
    if declared is None:
        return (), ()
    ids = declared.special_ids
    lead = (ids["bos"],) if declared.add_bos and "bos" in ids else ()
    tail = (ids["eos"],) if declared.add_eos and "eos" in ids else ()
    return lead, tail


def add_ends(enc: Encoding, lead: tuple[int, ...], tail: tuple[int, ...], n_chars: int,
             token_bytes: Callable[[int], bytes]) -> Encoding:
    """`enc` with `lead` ids inserted at ``(0, 0)`` and `tail` ids at ``(n_chars, n_chars)``, as
    special tokens covering no text (indices of unknown and special tokens moved along).

    >>> e = add_ends(Encoding([5], [b"a"], [(0, 1)]), (1,), (2,), 1, lambda i: b"")
    >>> e.ids, e.spans, e.special
    ([1, 5, 2], [(0, 0), (0, 1), (1, 1)], [0, 2])
    """
    if not lead and not tail:
        return enc
    k = len(lead)
    n = k + len(enc.ids)
    return Encoding(
        [*lead, *enc.ids, *tail],
        [*map(token_bytes, lead), *enc.tokens, *map(token_bytes, tail)],
        [(0, 0)] * k + list(enc.spans) + [(n_chars, n_chars)] * len(tail),
        [i + k for i in enc.unknown],
        list(range(k)) + [i + k for i in enc.special] + list(range(n, n + len(tail))),
        list(enc.dropped),
    )
