"""Explaining a loaded Unigram model (SentencePiece ``.model`` or tokenizer.json) as a trained one
is explained, and a WordLevel model's unknown words.

`UnigramExplainer` gives the Segmentations view what a trained `UnigramTokenizer` gives it: the
lattice of a word (every piece that matches, the unknown edges), its best segmentation with its
log-probability, the n best with their probabilities given the word, and segmentations sampled with
probability ∝ p^alpha (subword regularization), computed by the same functions
(`tokviz.core.unigram.tokenizer.nbest_paths`, ...). A word is taken as the model sees it: normalized
and pre-tokenized (``Hello`` -> ``▁Hello``). Scores are the file's, rounded to 2**-20 nat for the
exact sums those functions use; the encoder itself (`PieceLattice`) uses the file's floats, so the
"best" shown is the encoder's but for ties closer than 2**-20. Scores beyond +-`SCORE_LIMIT` nat
(a file may hold -1e308) are shown at that limit, where sums and probabilities stay finite.

`unreachable_pieces` lists the pieces no input can produce: encoding the piece's own text does not
give the piece (a longer or better-scored path always wins). `word_level_oov` counts a WordLevel
model's unknown words on a text. What this leaves out: widgets.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

from tokviz.core.errors import Cancelled
from tokviz.core.unigram.tokenizer import (
    LatticeEdge,
    Segmentation,
    UnigramExplanation,
    forward_log_z,
    nbest_paths,
    sample_path,
)
from tokviz.core.unigram.trainer import SCORE_SCALE

SCORE_LIMIT = 1e12  # nat; far beyond any real log-probability, and 2**20 times it fits in 64 bits


def score_units(x: float) -> int:
    """A score in 2**-20 nat, clamped to +-`SCORE_LIMIT` nat: ``score_units(-1e308) == -2**20 * 10**12``."""
    return round(max(-SCORE_LIMIT, min(SCORE_LIMIT, x)) * SCORE_SCALE)


def is_unigram(tok) -> bool:
    return tok.lattice_view() is not None


def loaded_unigram(timeline) -> "UnigramExplainer | None":
    """The explainer of a timeline's loaded Unigram model (SentencePiece or tokenizer.json), else None."""
    if timeline.has_counts:  # trained here: its own timeline explains it
        return None
    tok = timeline.tokenizer()
    return UnigramExplainer(tok) if is_unigram(tok) else None


def lattice_source(timeline, step: int) -> tuple[object, int] | None:
    """What explains a word of the timeline's Unigram model, and at which step: a model trained
    here (its tokenizer, at the round shown) or a loaded one (its `UnigramExplainer`); None for
    any other model (`StepTimeline.lattice_explainer`). Both have ``explain(word, step=, n=)``,
    ``sample(word, alpha=, step=, rng=)`` and ``caption`` (None: caption it by its round)."""
    return None if timeline is None else timeline.lattice_explainer(step)


def piece_scores(tok) -> list[float] | None:
    """Each id's score (log-probability) for a loaded Unigram model (0 for ids without a piece:
    added tokens), else None."""
    view = tok.lattice_view()
    if view is None:
        return None
    scores = list(view.scores)
    return scores + [0.0] * (tok.n_vocab - len(scores))


class UnigramExplainer:
    """``UnigramExplainer(tok)``: `nbest`, `sample`, `explain` for the words of a loaded model."""

    def __init__(self, tok) -> None:
        view = tok.lattice_view()
        if view is None:
            raise TypeError(f"{type(tok).__name__} is not a Unigram model")
        self.tok = tok
        self.caption = str(tok.name)
        self.lattice = view.lattice
        self._unk_form = tok.token_text(tok.unk_id) if tok.unk_id not in (None, -1) else "<unk>"
        self._unk_id = view.unk_id
        self.model_text = view.model_text  # `word` as the model's lattice reads it

    def _edges(self, text: str) -> list[list[tuple[int, int, int]]]:
        """edges[t]: (start, id, score in 2**-20 nat) of the pieces ending at t, by start."""
        n = len(text)
        edges: list[list[tuple[int, int, int]]] = [[] for _ in range(n + 1)]
        unk = score_units(self.lattice.unk_score)
        for st in range(n):
            found, single = self.lattice.edges_from(text, st)
            for end, i, sc in found:
                edges[end].append((st, i, score_units(sc)))
            if not single:
                edges[st + 1].append((st, -1, unk))
        return edges

    def _form(self, i: int) -> str:
        return self._unk_form if i < 0 else self.tok.token_text(i)

    def _segmentation(self, text: str, path, score: int, log_z: float) -> Segmentation:
        forms = tuple(self._form(i) for _, _, i in path)
        ids = tuple(self._unk_id if i < 0 else i for _, _, i in path)
        spans = tuple((a, b) for a, b, _ in path)
        return Segmentation(forms, ids, spans, score, math.exp(score / SCORE_SCALE - log_z))

    def nbest(self, word: str, n: int = 5, *, step: int | None = None) -> list[Segmentation]:
        text = self.model_text(word)
        if not text:
            return [Segmentation((), (), (), 0, 1.0)][:n]
        edges = self._edges(text)
        log_z = forward_log_z(edges)[-1]
        return [self._segmentation(text, path, score, log_z) for score, path in nbest_paths(edges, n)]

    def sample(self, word: str, *, alpha: float = 1.0, step: int | None = None,
               rng: random.Random | int | None = None) -> Segmentation:
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        text = self.model_text(word)
        edges = self._edges(text)
        path, score = sample_path(edges, alpha, rng)
        return self._segmentation(text, path, score, forward_log_z(edges)[-1])

    def explain(self, word: str, *, step: int | None = None, n: int = 5) -> UnigramExplanation:
        """The lattice of `word`, its best and n best segmentations, log Z and how many
        segmentations there are."""
        text = self.model_text(word)
        edges = self._edges(text)
        found = (LatticeEdge(s, t, i, self._form(i), sc) for t, es in enumerate(edges) for s, i, sc in es)
        lattice = tuple(sorted(found, key=lambda e: (e.start, e.end)))
        counts = [1] + [0] * (len(edges) - 1)
        for t in range(1, len(edges)):
            counts[t] = sum(counts[s] for s, _, _ in edges[t])
        nb = self.nbest(word, max(1, n))
        return UnigramExplanation(text, lattice, nb[0], tuple(nb), forward_log_z(edges)[-1], counts[-1])


def unreachable_pieces(tok, *, should_stop=None, progress=None) -> list[tuple[int, str]]:
    """(id, reason) of the ordinary pieces of a Unigram model no input can produce: ``"normalized"``
    (the normalizer changes the piece's text) or ``"viterbi"`` (the best path through the piece's
    own text is another segmentation)."""
    view = tok.lattice_view()
    lattice = view.lattice
    out = []
    items = list(lattice.ids.items())
    for lo in range(0, len(items), _CHUNK):
        if should_stop is not None and should_stop():
            raise Cancelled()
        if progress is not None:
            progress(lo, len(items))
        rest = []
        for piece, i in items[lo:lo + _CHUNK]:
            if view.changes(piece.replace("\u2581", " ")):  # normalized input never holds it
                out.append((i, "normalized"))
            else:
                rest.append((piece, i))
        if lattice.compiled is not None:  # all at once, compiled
            wins = lattice.compiled.whole_pieces([p for p, _ in rest], [i for _, i in rest]).tolist()
        else:
            path = lattice.word_path if lattice.mode == "f64" else lattice.best_path
            wins = [list(path(p)[0]) == [i] for p, i in rest]
        out.extend((i, "viterbi") for (_, i), wins_alone in zip(rest, wins) if not wins_alone)
    return sorted(out)


_CHUNK = 2048  # pieces between two checks for cancelling (and progress reports)


@dataclass(frozen=True)
class OovReport:
    """A WordLevel model on a text: its words, how many are unknown, and the commonest ones."""

    words: int
    unknown: int
    top: tuple[tuple[str, int], ...]  # (word, occurrences), most frequent first

    @property
    def rate(self) -> float:
        return self.unknown / self.words if self.words else 0.0


def word_level_oov(tok, text: str, *, top: int = 20) -> OovReport:
    """Which pre-tokenized words of `text` a WordLevel model (an `HfTokenizer`'s) maps to its
    unknown token."""
    if not tok.model.whole_words:
        raise TypeError("not a WordLevel model")
    words = tok.chunks(text)
    vocab = tok.model.vocab
    missing = Counter(w for w in words if w not in vocab)
    return OovReport(len(words), sum(missing.values()), tuple(missing.most_common(top)))
