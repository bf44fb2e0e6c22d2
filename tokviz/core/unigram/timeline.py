"""Unigram (SentencePiece style): a training run in stages and its timeline (the settings:
`tokviz.core.unigram.settings`).

The pieces: `UnigramSettings` (every option), `UnigramTraining` (``prepare()`` counts the corpus
and builds the seed vocabulary, ``steps()`` yields one `UnigramRound` per round, ``run()`` drains
them; the same stages as the BPE `Training`), `UnigramTimeline` (settings + rounds: the single
source of truth; step k = the vocabulary after round k) and `UnigramTokenizer`
(``timeline.tokenizer()``). Its model file (a versioned JSON dict) is `tokviz.core.unigram.model_file`.

Id layout: 0 ``[UNK]``, then the special tokens, then the pieces: first the final vocabulary
(highest score first, ties by piece string), then the pieces pruned in the last round, then
those of the round before, and so on (each round's group from the most to the least costly to
remove). So the vocabulary after round k is always a prefix of the ids, as with BPE merges.
`vocab_size` counts [UNK], the special tokens and the pieces. Chunks longer than
`MAX_TRAIN_CHUNK_CHARS` are left out of training (as SentencePiece skips long sentences); the
encoder handles them like any other chunk. Training rules are in
`tokviz.core.unigram.trainer`, encoding rules in `tokviz.core.unigram.tokenizer`.

    >>> tl = train_unigram(UnigramSettings(vocab_size=12, seed_min_count=1), texts=["hug pug hug hugs bun"])
    >>> [r.vocab_size for r in tl.rounds]
    [30, 22, 16, 12]
    >>> tl.tokenizer().encode("hugs").tokens
    [b'\\xe2\\x96\\x81hug', b's']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from tokviz.core import jit
from tokviz.core.algorithm.piece_tokenizer import PieceLayout
from tokviz.core.algorithm.records import Segmentation as StepSegmentation
from tokviz.core.algorithm.records import TreeNode, segment_pieces
from tokviz.core.algorithm.staged import StagedTraining
from tokviz.core.errors import CorpusError, SettingsError, TokvizError
from tokviz.core.gc_pause import paused_gc
from tokviz.core.lazy_names import lazy_names

from .rounds import (
    SCORE_SCALE,
    PrunedPiece,
    UnigramRound,
    id_order,
    positions,
    pruning_in_id_order,
    scores_in_id_order,
    shared_table,
)
from .settings import UnigramSettings
from .trainer import WORD_PREFIX, UnigramTrainer

if TYPE_CHECKING:
    from .tokenizer import UnigramTokenizer

# the tokenizer and its encoder load when first asked for: a training that only saves its model
# (``tokviz train``) never needs them, and their import would share the GIL with numba's
__getattr__, __dir__ = lazy_names(__name__, {name: "tokviz.core.unigram.tokenizer" for name in (
    "LatticeEdge", "Segmentation", "UnigramExplanation", "UnigramTokenizer")})

JSON_KERNELS = "tokviz.core.unigram.json_kernels"  # a model file's long lists as text (`model_file.json_text`)

MAX_TRAIN_CHUNK_CHARS = 4096  # longer chunks are left out of training (SentencePiece: 4192 bytes)
_PIECE = attrgetter("piece")

__all__ = [
    "LatticeEdge",  # noqa: F822 - loaded when first asked for (`__getattr__`)
    "PrunedPiece",
    "SCORE_SCALE",
    "Segmentation",  # noqa: F822 - loaded when first asked for (`__getattr__`)
    "UnigramExplanation",  # noqa: F822 - loaded when first asked for (`__getattr__`)
    "UnigramRound",
    "UnigramSettings",
    "UnigramTimeline",
    "UnigramTokenizer",
    "UnigramTrainer",
    "UnigramTraining",
    "WORD_PREFIX",
    "train_unigram",
    "warm_up",
]


@dataclass
class UnigramTimeline(PieceLayout):
    """Settings + rounds. Step k means "the vocabulary after round k"."""

    settings: UnigramSettings
    rounds: list[UnigramRound] = field(default_factory=list)
    corpus_length: int = 0  # weighted corpus length in characters
    n_chunks: int = 0  # distinct words the trainer saw
    seed_size: int = 0  # pieces in the seed vocabulary
    finished: bool = False

    # the StepTimeline protocol's capabilities (tokviz.core.algorithm.protocol)
    algorithm = "unigram"
    title = "Unigram"
    step_noun = "round"
    has_counts = True
    has_scores = False
    lists_merges = False
    replays_merges = False
    renumbers_vocab = True
    traces_matches = False

    def lattice_explainer(self, step: int) -> tuple[UnigramTokenizer, int] | None:
        """The tokenizer explains a word at round `step` (clamped to the rounds there are)."""
        return (self.tokenizer(), max(0, min(step, self.n_rounds - 1))) if self.n_rounds else None

    @property
    def n_rounds(self) -> int:
        return len(self.rounds)

    @property
    def vocab_size(self) -> int:
        return self.rounds[-1].vocab_size if self.rounds else self.n_special

    def _clamp(self, step: int | None) -> int:
        last = self.n_rounds - 1
        return last if step is None else max(0, min(int(step), last))

    def vocab_size_at(self, step: int | None = None) -> int:
        return self.rounds[self._clamp(step)].vocab_size if self.rounds else self.n_special

    def pieces(self) -> list[str]:
        """Every piece any round had, in id order (ids start after [UNK] and the specials)."""
        if not self.rounds:
            return []
        table = shared_table(self.rounds)
        if table is not None:  # from the rounds' arrays
            return list(map(table.strings.__getitem__, id_order(self.rounds).tolist()))
        out = list(self.rounds[-1].pieces)
        for r in reversed(self.rounds[1:]):
            out.extend(map(_PIECE, reversed(r.pruned)))
        return out

    def scores(self, step: int | None = None) -> list[int]:
        """Scores of the vocabulary after round `step`, in id order."""
        return self._scores_of([self.rounds[self._clamp(step)]])[0]

    def scores_by_round(self) -> list[list[int]]:
        """`scores(k)` for every round k (the id order is worked out once)."""
        return self._scores_of(self.rounds)

    def id_of_index(self) -> np.ndarray | None:
        """Each index of the rounds' shared piece table -> its id among the pieces (`pieces()`
        order), or None when the rounds are tuples (`tokviz.core.unigram.rounds`)."""
        table = shared_table(self.rounds)
        return None if table is None else positions(id_order(self.rounds), len(table.strings))

    def _scores_of(self, rounds: list[UnigramRound]) -> list[list[int]]:
        id_of = self.id_of_index()
        if id_of is not None:
            return [scores_in_id_order(r, id_of) for r in rounds]
        position = _positions(self.pieces())
        return [_in_id_order(r, position) for r in rounds]

    def pruning(self) -> tuple[list[int], list[int]]:
        """Per piece, in id order: the round that pruned it (-1: in the last round's vocabulary)
        and its score then (or its last score)."""
        id_of = self.id_of_index()
        if id_of is not None:  # from the rounds' arrays
            return pruning_in_id_order(self.rounds, id_of)
        at = _positions(self.pieces())
        kept = self.scores() if self.rounds else []
        rounds_of, scores = [-1] * len(at), kept + [0] * (len(at) - len(kept))
        for r in self.rounds:
            for p in r.pruned:
                rounds_of[at[p.piece]], scores[at[p.piece]] = r.index, p.score
        return rounds_of, scores

    def token_forms(self) -> list[str]:
        """Vocabulary form of every id: [UNK], specials, then `pieces()`."""
        return ["[UNK]", *self.settings.special_tokens, *self.pieces()]

    @property
    def steps(self) -> list[UnigramRound]:
        """The rounds (the timeline's steps)."""
        return self.rounds

    @property
    def n_steps(self) -> int:
        return self.n_rounds

    def length_at(self, step: int | None = None) -> int:
        """Corpus length in tokens (Viterbi segmentation) after round `step`."""
        return self.rounds[self._clamp(step)].viterbi_tokens if self.rounds else 0

    def tokenizer(self) -> UnigramTokenizer:
        """The tokenizer of this timeline; pass ``step=k`` to use the vocabulary of round k."""
        if not self.rounds:
            raise TokvizError("the timeline has no rounds yet; train first")
        from .tokenizer import UnigramTokenizer

        return UnigramTokenizer.from_timeline(self)

    @property
    def last_step(self) -> int:
        return max(0, self.n_steps - 1)  # step k = the vocabulary after round k

    def describe(self) -> list[str]:
        """A few lines summing the run up (the training panel's summary)."""
        r = self.rounds[-1] if self.rounds else None
        pieces = r.n_pieces if r else 0
        lines = [(f"Unigram · {self.last_step:,} rounds after the seed · vocabulary {self.vocab_size:,} tokens "
                  f"({self.seed_size:,} seed pieces → {pieces:,})")]
        if r is not None:
            lines.append(f"Log-likelihood {r.log_likelihood:,.0f}")
        return lines + self.corpus_lines()

    def merge_vocab(self) -> list[bytes]:
        return []  # rounds prune pieces; there are no merges to list

    def step_of(self, token_id: int) -> int | None:
        return None

    def new_id_at(self, k: int) -> int | None:
        return None

    def segment(self, text: str, k: int, tokenizer: UnigramTokenizer | None = None) -> StepSegmentation:
        return segment_pieces(self, tokenizer or self.tokenizer(), text, k)

    def merge_tree(self, token_id: int) -> TreeNode | None:
        return None


def _positions(pieces: list[str]) -> dict[str, int]:
    return dict(zip(pieces, range(len(pieces))))


def _in_id_order(r: UnigramRound, position: dict[str, int]) -> list[int]:
    """The scores of round `r` in id order: its pieces are the first ``r.n_pieces`` of the ids."""
    ids = np.fromiter(map(position.__getitem__, r.pieces), dtype=np.int64, count=r.n_pieces)
    out = np.empty(r.n_pieces, dtype=np.int64)
    out[ids] = r.scores
    return out.tolist()


def target_pieces(settings: UnigramSettings, n_chars: int) -> int:
    """How many pieces the vocabulary size leaves, or `SettingsError` if the characters of the
    corpus do not fit (they are never pruned)."""
    n_special = 1 + len(settings.special_tokens)
    fixed = n_special + n_chars
    if settings.vocab_size < fixed:
        raise SettingsError(
            f"vocabulary size {settings.vocab_size} is too small: [UNK], the special tokens and the "
            f"{n_chars} characters of the corpus already take {fixed} ids; choose a size of at least {fixed}"
        )
    return settings.vocab_size - n_special


class UnigramTraining(StagedTraining):
    """One Unigram run in stages: `prepare()` (read, count, seed), then iterate `steps()`."""

    steps_field = "rounds"
    collector_free = True

    def _setup(self, counts: dict[str, int], should_stop) -> UnigramTimeline:
        s = self.settings
        if max(map(len, counts), default=0) > MAX_TRAIN_CHUNK_CHARS:
            counts = {w: n for w, n in counts.items() if len(w) <= MAX_TRAIN_CHUNK_CHARS}
        if not counts:
            raise CorpusError(
                f"every chunk is longer than {MAX_TRAIN_CHUNK_CHARS} characters; choose a split that "
                f"cuts the text into words (whitespace, gpt2, ...)"
            )
        chars = set("".join(counts))
        if s.word_prefix:
            chars.add(s.word_prefix)
        target = target_pieces(s, len(chars))
        self._trainer = t = UnigramTrainer(
            list(counts), list(counts.values()), target_pieces=target, word_prefix=s.word_prefix,
            max_piece_chars=s.max_piece_chars, seed_size=s.seed_size, seed_min_count=s.seed_min_count,
            prune_fraction=s.prune_fraction, em_iterations=s.em_iterations, n_special=1 + len(s.special_tokens),
            processes=self.processes,
        )
        t.should_stop = should_stop
        self.budget = 1 + t.rounds_needed()  # expected number of rounds (round 0 included)
        return UnigramTimeline(s, corpus_length=t.corpus_length, n_chunks=len(counts), seed_size=len(t.pieces))

    def _trainer_steps(self) -> Iterator[UnigramRound]:
        return paused_gc(self._trainer.rounds())


def train_unigram(
    settings: UnigramSettings, *, texts: Sequence[str] = (), table: Mapping[str, int] | None = None
) -> UnigramTimeline:
    """Train to completion: ``train_unigram(UnigramSettings(vocab_size=1000), texts=[text])``."""
    return UnigramTraining(settings, texts=texts, table=table).run()


def warm_up(*, encoder: bool = True) -> bool:
    """Load the compiled trainer now (numba and its kernels: about 0.4 s the first time in a
    process) by training a tiny corpus, which calls every kernel with the argument types a real
    training passes, and with `encoder` encoding a word with the result (the encoder's kernels: what
    the window needs next, not a training that only saves its model). False when the kernels are
    off (`tokviz.core.jit`). The app runs it on a thread of its own when Unigram is chosen, so the
    training the user then starts, and its first encode, do not wait."""
    from .compiled import load_kernels

    if load_kernels() is None:
        return False
    timeline = train_unigram(UnigramSettings(vocab_size=12, seed_min_count=1), texts=["hug pug hug hugs bun"])
    json_kernels = jit.kernels(JSON_KERNELS)  # what saving the model takes (`model_file.json_text`)
    if json_kernels is not None:
        json_kernels.warm()
    if encoder:
        timeline.tokenizer().encode_ordinary("hugs")
    return True
