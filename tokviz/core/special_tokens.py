"""Added and special tokens of any tokenizer, with their flags, and encoding them as text.

Hugging Face tokenizers carry "added tokens" with five flags: ``special`` (a control token:
skipped by ``decode(skip_special_tokens=True)``, encoded as text when special tokens are
split), ``lstrip`` / ``rstrip`` (the token swallows whitespace on its left / right),
``normalized`` (matched in the normalized text, not the raw one) and ``single_word`` (matched only
as a whole word). tiktoken encodings and tokviz's trained tokenizers have special tokens only: they
are shown with ``special`` set and the other flags off.

`added_tokens(tok)` lists them for any tokenizer; `encode_specials_as_text(tok, text)` encodes
special-token strings typed in the text as ordinary text (what a model sees when a user writes
``<|im_end|>`` and the application does not let it through as a control token).
"""

from __future__ import annotations

from dataclasses import dataclass

from .encoding import Encoding

FLAG_NAMES = ("special", "lstrip", "rstrip", "normalized", "single_word")


@dataclass(frozen=True)
class AddedToken:
    """An added token of a tokenizer and its flags (tokenizers' ``AddedToken``)."""

    id: int
    content: str
    special: bool = True
    normalized: bool = False
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False

    @property
    def flags(self) -> tuple[str, ...]:
        """The names of the flags that are set, in `FLAG_NAMES` order.

        >>> AddedToken(7, "<s>", special=True, lstrip=True).flags
        ('special', 'lstrip')
        """
        return tuple(name for name in FLAG_NAMES if getattr(self, name))

    def describe(self) -> str:
        """``'added token · special · lstrip'`` (``'added token'`` alone when no flag is set)."""
        return " · ".join(("added token", *self.flags))


def added_tokens(tok) -> list[AddedToken]:
    """The added tokens of `tok` in id order: a ``tokenizer.json``'s added tokens with their flags,
    or the special tokens of any other tokenizer (flag ``special`` only)."""
    added = tok.added
    if added is not None:
        return sorted(added, key=lambda t: t.id)
    specials = tok.special_tokens or {}
    return sorted((AddedToken(i, s) for s, i in specials.items()), key=lambda t: t.id)


def added_token_map(tok) -> dict[int, AddedToken]:
    """`added_tokens` by id."""
    return {t.id: t for t in added_tokens(tok)}


def encode_specials_as_text(tok, text: str, *, step: int | None = None) -> Encoding:
    """Encode `text` with every special-token string in it as ordinary text. Added tokens that are
    not special (a ``tokenizer.json``'s ``<think>``-style tokens) are still recognised, and a
    post-processor still adds its BOS/CLS/SEP."""
    plain = [t.content for t in added_tokens(tok) if not t.special]
    return tok.encode(text, step=step, allowed_special=plain, disallowed_special=())
