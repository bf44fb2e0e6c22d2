"""Which split a byte-level BPE vocabulary was made with, read from its tokens.

BPE merges never cross a chunk boundary of the split it was trained with, so every token of a
vocabulary is one whole chunk under that split. Under another split some tokens cannot be
formed: Llama 3's ``123`` under Qwen's one-digit split, cl100k's ``.get`` under llama.cpp's
``default`` (punctuation runs cut off first). `vocab_origin` samples the vocabulary's tokens and
measures, for every family of `split_families` and for the tokenizer's own split, the share of
them that are one chunk ("formable"). The families reaching the highest share are the origin;
the tokenizer's own split falling clearly below it is a mismatch (a GGUF file declaring the
wrong ``tokenizer.ggml.pre``, a tokenizer.json carrying another model's regex): the ids then
differ from the model's on the texts those tokens cover.

A split that only cuts more finely where the vocabulary has no tokens anyway (Mistral's
one-digit split against o200k's three digits, on a vocabulary with no multi-digit tokens) is
not a mismatch: those ids come out the same. What this leaves out: vocabularies that are not
byte-level (SentencePiece ``▁`` pieces, WordPiece ``##``), which this cannot judge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .split_families import CHECK_TEXT, behaviours, split_families

SAMPLE = 3000  # tokens tested: the shares settle well before (0.1 s for every family)
MARGIN = 0.005  # own share this far below the best: a mismatch (true splits score 100.0%)


@dataclass(frozen=True)
class VocabOrigin:
    """`shares`: behaviour name -> share of the `sample` tokens one chunk under it; `own_share`
    under the tokenizer's own split; `unformable`: a few tokens the own split cannot form."""

    sample: int
    shares: dict[str, float]
    own_share: float
    unformable: tuple[str, ...]

    @property
    def best(self) -> float:
        return max(self.shares.values(), default=0.0)

    @property
    def origin(self) -> tuple[str, ...]:
        """The behaviours under which the most tokens are formable (ties: all of them)."""
        return tuple(name for name, share in self.shares.items() if share == self.best)

    @property
    def mismatch(self) -> bool:
        """Does the tokenizer's own split leave clearly more tokens unformable than the origin's?"""
        return self.own_share < self.best - MARGIN

    def describe(self) -> str:
        """``'vocabulary made with a Llama 3 = cl100k split (100.0% of 3,000 tokens formable;
        its own split: 76.3%, e.g. '.get', '123')'``."""
        line = f"vocabulary made with a {' / '.join(self.origin)} split ({self.best:.1%} of {self.sample:,} tokens " \
               f"formable; its own split: {self.own_share:.1%}"
        if self.unformable:
            line += ", e.g. " + ", ".join(repr(t) for t in self.unformable)
        return line + ")"


def sampled_tokens(tok, *, sample: int = SAMPLE) -> list[str] | None:
    """Up to `sample` ordinary tokens of `tok` as text (two characters or more, spread over the
    ids), or None when its vocabulary is not byte-level (not every byte is a token)."""
    vocab = tok.vocab()
    singles = {b for b in vocab if b is not None and len(b) == 1}
    if len(singles) < 256:
        return None
    texts = []
    for i, data in enumerate(vocab):
        if data is None or len(data) < 2 or tok.is_special(i):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # part of a character: no split can cut it
            continue
        if len(text) >= 2:
            texts.append(text)
    return texts[:: max(1, len(texts) // sample)][:sample]


def vocab_origin(tok, own_split: Callable[[str], list[str]], *, sample: int = SAMPLE) -> VocabOrigin | None:
    """How the vocabulary of `tok` fits each family and `own_split` (the tokenizer's chunks of a
    text); None for a vocabulary this cannot judge."""
    texts = sampled_tokens(tok, sample=sample)
    if not texts:
        return None
    by_chunks = behaviours()
    shares: dict[str, float] = {}
    for family in split_families():
        name = by_chunks[tuple(family.chunks(CHECK_TEXT))]
        if name not in shares:
            shares[name] = sum(family.chunks(t) == [t] for t in texts) / len(texts)
    unformable = [t for t in texts if own_split(t) != [t]]
    return VocabOrigin(len(texts), shares, 1 - len(unformable) / len(texts), tuple(_examples(unformable)))


def _examples(tokens: list[str], n: int = 3) -> list[str]:
    """A few of `tokens`, of different kinds where there are (digits, letters, other)."""
    kinds: dict[str, str] = {}
    for t in tokens:
        kind = "digits" if any(c.isdigit() for c in t) else "letters" if t.strip().isalpha() else "other"
        kinds.setdefault(kind, t)
    picked = list(kinds.values())
    picked += [t for t in tokens if t not in picked][: n - len(picked)]
    return picked[:n]
