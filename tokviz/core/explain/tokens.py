"""Explaining any loaded tokenizer: merge trees, and glitch tokens (unreachable or unused).

Works on every tokenizer `load_tokenizer` returns (tokviz/minbpe `BpeTokenizer`, tiktoken-style
`RankBpeTokenizer`, `HfTokenizer`). A merge tree shows how a token is built from bytes (or base
symbols); "trace a word" is the tokenizer's own ``explain(word, step=k)``.

Glitch tokens: *unreachable* ones, which encoding their own text does not give back (the split
pattern cuts the text, the merges end elsewhere, or the token is a byte sequence that is not
text); *unused* ones, which never occur when encoding a chosen corpus (GPT-2's
`` SolidGoldMagikarp`` is a single token that ordinary text hardly ever produces). Functions that
walk the whole vocabulary take `should_stop` (checked every few hundred tokens; raises
`Cancelled`) and `progress(done, total)` callbacks for GUI workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tokviz.core.algorithm.records import LoadedMerge
from tokviz.core.errors import Cancelled

ShouldStop = Callable[[], bool]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class MergeTree:
    """How a token is built: `children` are the two parts a merge joined (empty for a base
    token). A token no single merge forms (tiktoken can still produce it for a chunk equal to it)
    has ``formed_by_merge=False`` and the parts its own bytes end in as children."""

    id: int
    token: bytes
    children: tuple["MergeTree", ...] = ()
    formed_by_merge: bool = True

    @property
    def depth(self) -> int:
        return 1 + max((c.depth for c in self.children), default=0)

    def leaves(self) -> list[int]:
        if not self.children:
            return [self.id]
        return [i for c in self.children for i in c.leaves()]


@dataclass(frozen=True)
class GlitchToken:
    """A token encoding its own text does not give back. `reason`: ``"split"`` (the
    pre-tokenizer cuts its text), ``"merge"`` (BPE ends in other tokens), ``"partial_utf8"`` (its
    bytes are not text on their own), ``"normalized"`` (the normalizer changes its text),
    ``"viterbi"`` (a Unigram model's best path through its text is another segmentation);
    `ids` is what its text encodes to (empty for partial UTF-8)."""

    id: int
    token: bytes
    reason: str
    ids: tuple[int, ...] = ()


def merge_of(tok, token_id: int) -> tuple[int, int] | None:
    """The pair whose merge forms `token_id`, for any tokenizer kind."""
    return tok.merge_of(token_id)


def merge_list(tok, *, should_stop: ShouldStop | None = None) -> list[LoadedMerge]:
    """The merge timeline of any tokenizer, in rank order (``index`` = step). Counts are known
    only for tokviz's own trained tokenizers' timelines, not here: ``count`` is None."""
    return tok.merge_list(should_stop=should_stop)


def _parts(tok, token_id: int) -> list[int]:
    return tok.parts_of(token_id)


def merge_tree(tok, token_id: int) -> MergeTree:
    """The merge tree of `token_id` (see `MergeTree`)."""
    memo: dict[int, MergeTree] = {}

    def build(i: int, depth: int) -> MergeTree:
        if i in memo:
            return memo[i]
        data = tok.token_bytes(i)
        pair = merge_of(tok, i)
        if pair is not None and depth < 512:
            node = MergeTree(i, data, (build(pair[0], depth + 1), build(pair[1], depth + 1)))
        else:
            parts = _parts(tok, i) if depth < 512 else [i]
            if len(parts) > 1:
                node = MergeTree(i, data, tuple(build(p, depth + 1) for p in parts), False)
            else:
                node = MergeTree(i, data)
        memo[i] = node
        return node

    try:
        return build(token_id, 0)
    finally:
        del build  # a recursive closure is a reference cycle: freed now, not by the collector


def ordinary_ids(tok) -> list[int]:
    """Ids of every ordinary (non-special, used) token."""
    vocab = tok.vocab()
    special = set(tok.special_tokens.values())
    special |= set(tok.control_ids)  # SentencePiece: <s>, </s> never come from text
    unk = tok.unk_id
    return [i for i, t in enumerate(vocab) if t and i not in special and i != unk]


def find_unreachable(
    tok,
    *,
    ids: Iterable[int] | None = None,
    should_stop: ShouldStop | None = None,
    progress: Progress | None = None,
) -> list[GlitchToken]:
    """Tokens that encoding their own text does not give back, with the reason (see
    `GlitchToken`): each tokenizer's own check (``tok.unreachable``; tokenizer.json models test
    their own symbols)."""
    from tokviz.core.explain.unigram import is_unigram, unreachable_pieces

    if is_unigram(tok):  # Unigram models: the Viterbi (and the normalizer) decide, not merges
        wanted = set(ids) if ids is not None else None
        found = unreachable_pieces(tok, should_stop=should_stop, progress=progress)
        return [GlitchToken(i, tok.token_bytes(i), reason) for i, reason in found
                if (wanted is None or i in wanted) and not tok.is_special(i)]
    todo = list(ids) if ids is not None else ordinary_ids(tok)
    out = []
    total = len(todo)
    for n, i in enumerate(todo):
        if n % 256 == 0:
            if should_stop is not None and should_stop():
                raise Cancelled()
            if progress is not None:
                progress(n, total)
        if tok.is_special(i):
            continue
        found = tok.unreachable(i)
        if found is not None:
            out.append(GlitchToken(i, tok.token_bytes(i), *found))
    if progress is not None:
        progress(total, total)
    return out


def token_counts(
    tok,
    texts: Iterable[str],
    *,
    should_stop: ShouldStop | None = None,
) -> "np.ndarray":
    """How often each id occurs when encoding `texts` (ordinary encoding, no special tokens)."""
    import numpy as np  # here: opening a tokenizer does not need numpy

    counts = np.zeros(tok.n_vocab, dtype=np.int64)
    for text in texts:
        if should_stop is not None and should_stop():
            raise Cancelled()
        ids = np.asarray(tok.encode_ids(text), dtype=np.int64)
        if ids.size:
            counts += np.bincount(ids, minlength=tok.n_vocab)[: tok.n_vocab]
    return counts


def find_unused(tok, texts: Iterable[str], *, should_stop: ShouldStop | None = None) -> list[int]:
    """Ordinary tokens that never occur when encoding `texts`, in id order."""
    counts = token_counts(tok, texts, should_stop=should_stop)
    return [i for i in ordinary_ids(tok) if counts[i] == 0]
