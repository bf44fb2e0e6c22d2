"""`ids_vocab`: the bytes of every id of a ``{token bytes: rank}`` vocabulary and its special tokens,
checked as tiktoken's rule needs them (ranks distinct, all 256 single bytes, no special token on a
token's id). What this leaves out: encoding (`tokenizer`)."""

from __future__ import annotations

from collections.abc import Mapping

from tokviz.core.errors import ModelFormatError


def ids_vocab(enc: dict[bytes, int], special_tokens: Mapping[str, int], name: str) -> list[bytes | None]:
    """The bytes of each id: a token by its rank, a special token as its UTF-8 text, None for an
    id without either; `ModelFormatError` names what is wrong."""
    vocab = by_rank(enc, name)
    missing = [b for b in range(256) if bytes([b]) not in enc]
    if missing:
        raise ModelFormatError(
            f"{name}: the vocabulary lacks {len(missing)} single-byte tokens (first: "
            f"0x{missing[0]:02x}); byte-level BPE needs all 256 bytes"
        )
    for s, i in special_tokens.items():
        if 0 <= i < len(vocab) and vocab[i] is not None:
            raise ModelFormatError(f"{name}: special token {s!r} reuses the id {i} of a token")
    vocab.extend([None] * (max([len(vocab) - 1, *special_tokens.values()]) + 1 - len(vocab)))
    for s, i in special_tokens.items():
        vocab[i] = s.encode("utf-8")
    return vocab


def by_rank(enc: dict[bytes, int], name: str) -> list[bytes | None]:
    """The token of each rank (None where no token has it); `ModelFormatError` if two share one.
    A file listed in rank order from 0 (every OpenAI encoding) takes its tokens as they come: no
    set of the ranks and no loop over them (200,000 ranks: 30 ms).

    >>> by_rank({b"a": 0, b"b": 1}, "t"), by_rank({b"a": 2, b"b": 0}, "t")
    ([b'a', b'b'], [b'b', None, b'a'])
    """
    ranks = list(enc.values())
    if ranks == list(range(len(ranks))):
        return list(enc)
    if len(set(ranks)) != len(ranks):
        raise ModelFormatError(f"{name}: two tokens share a rank; ranks must be distinct")
    vocab: list[bytes | None] = [None] * (max(ranks, default=-1) + 1)
    for tok, r in enc.items():
        vocab[r] = tok
    return vocab
