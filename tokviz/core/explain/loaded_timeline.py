"""`LoadedTimeline`: a loaded (pretrained) tokenizer dressed as a timeline, for the model protocol.

Panels and the CLI read timelines (`StepModel.timeline`): ``algorithm``, ``steps``, ``n_steps``,
``finished``, ``settings``, ``vocab_size``, ``token_bytes()``, ``tokenizer()``, ``length_at``.
A loaded BPE tokenizer's steps are its merges in rank order (`LoadedMerge`, counts unknown);
``tokenizer().encode(text, step=k)`` uses only the first k of them (tiktoken-style tokenizers:
the first k multi-byte tokens by rank). WordPiece tokenizer.json files have no merges: 0 steps.

The merge list of a tiktoken encoding takes seconds to build (a BPE run per token), so `steps`
is lazy: a merge's pair is worked out when a row is first read (~15 µs) and kept. What this
leaves out: loading files (`loader`), the explaining algorithms (`explain`), widgets.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from tokviz.core.algorithm.defaults import TimelineDefaults
from tokviz.core.algorithm.lazy_merges import LazyMerges
from tokviz.core.algorithm.records import LoadedMerge, Segmentation, TreeNode
from tokviz.core.explain.tokens import merge_tree as _merge_tree


class _TokenBytes:
    """Bytes of every id of a tokenizer (``b""`` for an unused one), listed when first read: a
    model may have millions of pieces, and loading one to encode needs none of them. It holds the
    tokenizer, never the timeline, so the merge list's callback makes no cycle (a frozen cycle,
    `gc.freeze`, would never be freed)."""

    __slots__ = ("_tok", "_listed")

    def __init__(self, tok) -> None:
        self._tok = tok
        self._listed: list[bytes] | None = None

    @property
    def listed(self) -> list[bytes]:
        if self._listed is None:
            self._listed = [t if t is not None else b"" for t in self._tok.vocab()]
        return self._listed

    def __getitem__(self, token_id: int) -> bytes:
        return self.listed[token_id]


@dataclass(frozen=True)
class LoadedSettings:
    """What a loaded tokenizer is (shown instead of training settings)."""

    name: str
    kind: str  # "tiktoken" (also GPT-2 encoder.json/vocab.bpe), "hf", "bpe" (tokviz/minbpe)
    source: str  # file or name it came from
    pattern: str | None  # split pattern, when the tokenizer has one
    n_vocab: int
    n_merges: int
    special_tokens: tuple[str, ...] = ()
    model: str = "BPE"  # "BPE" or "WordPiece"
    declared_pre: str | None = None  # the pre-tokenizer name the file declares (GGUF's tokenizer.ggml.pre)

    def describe(self) -> list[str]:
        """Lines for a summary panel."""
        lines = [f"Loaded tokenizer {self.name} ({self.model}, {self.kind})",
                 f"{self.n_vocab:,} tokens · {self.n_merges:,} merges on the timeline (counts unknown)"]
        if self.special_tokens:
            shown = ", ".join(self.special_tokens[:4]) + (" …" if len(self.special_tokens) > 4 else "")
            lines.append(f"{len(self.special_tokens)} special token{'s' if len(self.special_tokens) > 1 else ''}: {shown}")
        if self.declared_pre is not None:
            lines.append(f"Declares the pre-tokenizer {self.declared_pre!r}")
        if self.source:
            lines.append(f"From {self.source}")
        return lines


class LoadedTimeline(TimelineDefaults):
    """A loaded tokenizer as a finished timeline. ``LoadedTimeline(load_tokenizer("gpt2"))``."""

    # the StepTimeline protocol's capabilities (tokviz.core.algorithm.protocol)
    algorithm = "pretrained"
    step_noun = "merge"
    has_counts = False  # loaded, not trained here: no counts or corpus lengths
    has_scores = False
    lists_merges = True
    renumbers_vocab = False
    replays_merges = False  # the loaded tokenizer is the one to use at every step
    traces_matches = False

    def lattice_explainer(self, step: int):
        """A loaded Unigram model's `UnigramExplainer` (every step is the whole model), else None."""
        from tokviz.core.explain.unigram import loaded_unigram

        explainer = loaded_unigram(self)
        return (explainer, 0) if explainer is not None else None
    finished = True
    corpus_length = 0  # unknown: no training corpus
    n_chunks = 0

    def __init__(self, tok, *, source: str | None = None) -> None:
        self._tok = tok
        self._bytes = _TokenBytes(tok)
        if tok.ranks_merges:
            ids: Sequence[int] = tok.merge_ranks
            steps: Sequence[LoadedMerge] = LazyMerges(ids, self._bytes.__getitem__, tok.merge_of)
        else:
            from tokviz.core.explain.tokens import merge_list

            full = merge_list(tok)
            ids = getattr(full, "ids", None)  # a lazy list (SentencePiece's) has them before its rows
            if ids is None:
                ids = [m.id for m in full]
            steps = full
        self._ids = ids
        self.steps = steps
        self._step_of: dict[int, int] | None = None
        model = (tok.model.kind if tok.model is not None else None) or "BPE"  # a tokenizer.json model's kind
        self.settings = LoadedSettings(
            name=str(tok.name),
            kind=str(tok.kind),
            source=str(source or tok.source or tok.name),
            pattern=tok.pattern,
            n_vocab=tok.n_vocab,
            n_merges=len(ids),
            special_tokens=tuple(tok.special_tokens or {}),
            model=str(model),
            declared_pre=tok.declared_pre,
        )

    @property
    def _vocab(self) -> list[bytes]:
        """Bytes of every id (`_TokenBytes`)."""
        return self._bytes.listed

    @property
    def title(self) -> str:
        return self.settings.name

    def __repr__(self) -> str:
        return f"<LoadedTimeline {self.settings.name!r} {self.n_steps} merges>"

    # -- the model protocol -----------------------------------------------------------------

    @property
    def n_steps(self) -> int:
        return len(self._ids)

    n_merges = n_steps

    @property
    def vocab_size(self) -> int:
        return self._tok.n_vocab

    @property
    def special_ids(self) -> dict[str, int]:
        return dict(self._tok.special_tokens or {})

    def token_bytes(self) -> list[bytes]:
        """Bytes of every id (b"" for ids the tokenizer leaves unused)."""
        return list(self._vocab)

    def tokenizer(self):
        """The loaded tokenizer itself; ``step=k`` uses its first k merges."""
        return self._tok

    @property
    def last_step(self) -> int:
        return self.n_steps

    def describe(self) -> list[str]:
        """The settings' lines and the pre-tokenizer's fingerprint (family, vocabulary origin,
        warnings), worked out on first call: the summary panel asks, encoding never does."""
        return self.settings.describe() + self.fingerprint_lines

    @cached_property
    def fingerprint_lines(self) -> list[str]:
        from tokviz.core.errors import TokvizError
        from tokviz.core.explain.fingerprints import fingerprint

        try:
            return fingerprint(self._tok).describe()
        except TokvizError as exc:  # a custom split regex that gives up on the check text
            return [f"Pre-tokenizer not fingerprinted: {exc}"]

    def merge_vocab(self) -> list[bytes]:
        return self.token_bytes()

    def length_at(self, step: int) -> None:
        """Corpus length after `step` merges: unknown for a loaded tokenizer."""
        return None

    # -- explaining -------------------------------------------------------------------------

    def step_of(self, token_id: int) -> int | None:
        """Index of the merge that forms `token_id` (its step is that + 1), or None."""
        ids = self._ids
        if self._tok.ranks_merges:
            i = bisect_left(ids, token_id)
            return i if i < len(ids) and ids[i] == token_id else None
        if self._step_of is None:
            m: dict[int, int] = {}
            for i, t in enumerate(ids):
                m.setdefault(t, i)
            self._step_of = m
        return self._step_of.get(token_id)

    def merge_ids(self) -> list[int]:
        """Id of the token each merge forms, in rank order (cheap)."""
        return list(self._ids)

    def new_id_at(self, k: int) -> int | None:
        """Id of the token the merge leading to step k formed (None at step 0)."""
        return self._ids[k - 1] if 0 < k <= len(self._ids) else None

    def merge_tree(self, token_id: int, *, max_nodes: int = 2000) -> TreeNode | None:
        """The token's merge tree (rank = merge index on this timeline), None for an unknown id."""
        if not 0 <= int(token_id) < len(self._vocab):
            return None
        budget = [max_nodes]

        def convert(node) -> TreeNode:
            budget[0] -= 1
            rank = self.step_of(node.id) if node.formed_by_merge else None
            if budget[0] <= 0:
                return TreeNode(node.id, rank)
            return TreeNode(node.id, rank, tuple(convert(c) for c in node.children))

        try:
            return convert(_merge_tree(self._tok, int(token_id)))
        finally:
            del convert  # a recursive closure is a cycle (holding this timeline): freed now, not by the collector

    def segment(self, text: str, k: int, tokenizer=None) -> Segmentation:
        """`text` encoded with the first k merges; ``fresh`` = tokens the k-th merge formed (the
        tokenizer is always the loaded one)."""
        k = max(0, min(int(k), self.n_steps))
        enc = self._tok.encode_ordinary(text, step=k)
        new = self.new_id_at(k)
        fresh = tuple(i for i, t in enumerate(enc.ids) if t == new) if new is not None else ()
        return Segmentation(text, tuple(enc.ids), tuple(enc.spans), fresh, k)

    def all_steps(self) -> list[LoadedMerge]:
        """Every merge (works them all out: seconds for 200k tokens; CLI and exports)."""
        return list(self.steps)


def as_timeline(tok, *, source: str | None = None) -> LoadedTimeline:
    """Wrap a tokenizer `load_tokenizer` returned."""
    return LoadedTimeline(tok, source=source)
