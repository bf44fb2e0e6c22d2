"""`UnigramTokenizer`: Viterbi encoding, n-best segmentations and sampling, at any round.

Each chunk (word) is encoded on its own, read as ``word_prefix + chunk`` (``▁word``) when a
prefix is set. Its lattice has an edge for every vocabulary piece that matches at a position,
weighted by the piece's score (log-probability in units of 2**-20 nat, so sums are exact). A
character that is not a piece gets an ``[UNK]`` edge of its own, scored 10 nats below the least
probable piece (SentencePiece's penalty); each unknown character becomes one ``[UNK]``. The
lattice is the one every Unigram tokenizer runs (`tokviz.core.unigram.encoder.PieceLattice`, in
its exact integer mode), one per step's vocabulary.

- `encode`: the best segmentation (Viterbi, `PieceLattice.word_path`). Ties, exactly: the higher
  total score wins; among equal totals, the one whose last piece is longest, then recursively to
  the left (sentencepiece's and tokenizers' rule too: only their arithmetic is float).
- `nbest`: the k best segmentations in that order (exact k-best Viterbi over the lattice's edges,
  `PieceLattice.edges_by_end`: each node keeps its k best partial paths), with each one's
  probability given the word, ``exp(score) / Z`` where Z sums over all segmentations. Example:
  ``unbelievable`` -> ``▁un believ able`` (0.6), ``▁unbeliev able`` (0.3), ...
- `sample` / `encode_sampled`: subword regularization. A segmentation is drawn with probability
  proportional to ``p(segmentation) ** alpha`` (forward filtering, backward sampling); alpha = 1
  samples from the model, small alpha flattens towards uniform.

Step k uses the vocabulary after round k. Decoding joins the pieces and turns the prefix marker
back into a space (dropping the one at the very start), as SentencePiece does.
What this leaves out: training (`tokviz.core.unigram.trainer`), model files (`tokviz.core.unigram.timeline`).
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tokviz.core.algorithm.chunked import ChunkResult
from tokviz.core.algorithm.piece_tokenizer import UNK_ID, PieceTokenizer
from tokviz.core.algorithm.protocol import StepTimeline as UnigramTimeline  # a `UnigramTimeline`
from tokviz.core.algorithm.records import UNK_TOKEN
from tokviz.core.encoding import Encoding, uncovered
from tokviz.core.errors import EncodeError
from tokviz.core.text.split import Splitter, parse_split
from tokviz.core.text.surrogates import surrogate_safe

from .encoder.lattice import INT, PieceLattice
from .trainer import SCORE_SCALE, WORD_PREFIX

UNK_PENALTY = 10 * SCORE_SCALE  # [UNK] scores this much below the least probable piece
_N_VOCABS = 4

Edge = tuple[int, int, int]  # (start, id, score) of an edge ending at a given position


@dataclass(frozen=True, slots=True)
class Segmentation:
    """One segmentation of a word, with its log-probability and its probability given the word."""

    pieces: tuple[str, ...]  # vocabulary forms ("[UNK]" for an unknown character)
    ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]  # character spans in the word
    score: int  # sum of the pieces' scores (units of 2**-20 nat)
    prob: float  # exp(score) / sum over all segmentations of the word

    @property
    def log_prob(self) -> float:
        return self.score / SCORE_SCALE


@dataclass(frozen=True, slots=True)
class LatticeEdge:
    """A piece that matches somewhere in a word."""

    start: int  # character span in the word (the prefix marker has width 0)
    end: int
    id: int
    piece: str
    score: int


@dataclass(frozen=True, slots=True)
class UnigramExplanation:
    """Everything a panel needs to show how a word is segmented."""

    word: str
    edges: tuple[LatticeEdge, ...]  # every matching piece, by (start, end)
    best: Segmentation
    nbest: tuple[Segmentation, ...]  # best first; nbest[0] == best
    log_z: float  # log of the summed probability of all segmentations
    n_segmentations: int


@surrogate_safe  # encode_sampled (the grid is PieceTokenizer's)
class UnigramTokenizer(PieceTokenizer):
    """Pieces (ids after ``[UNK]`` and the special tokens) with scores for each step.

    `scores[k]` holds the scores of the first ``len(scores[k])`` pieces: the vocabulary after
    round k is a prefix of the piece list.
    """

    scores_pieces = True  # log_prob(id, step=): a piece's log-probability at a round
    caption: str | None = None  # as a timeline's lattice explainer, views caption it by its round

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[Sequence[int]],
        splitter: Splitter,
        *,
        word_prefix: str | None = WORD_PREFIX,
        special_tokens: Sequence[str] = (),
        name: str = "unigram",
    ) -> None:
        if not scores:
            raise EncodeError("a unigram tokenizer needs the scores of at least one step")
        if any(not p for p in pieces) or len(set(pieces)) != len(pieces):
            raise EncodeError("unigram pieces must be distinct and non-empty")
        if any(len(s) > len(pieces) for s in scores):
            raise EncodeError("a step has more scores than there are pieces")
        self.pieces = list(pieces)
        self.scores = [list(s) for s in scores]
        self.word_prefix = word_prefix or None
        self.name = name
        forms = [UNK_TOKEN.encode(), *(s.encode("utf-8") for s in special_tokens)]
        forms += [p.encode("utf-8") for p in self.pieces]
        super().__init__(forms, splitter, special_tokens)
        self._lattices: dict[int, PieceLattice] = {}

    @classmethod
    def from_timeline(cls, timeline: "UnigramTimeline") -> "UnigramTokenizer":
        s = timeline.settings
        return cls(
            timeline.pieces(),
            timeline.scores_by_round(),
            parse_split(s.split),
            word_prefix=s.word_prefix,
            special_tokens=s.special_tokens,
        )

    @classmethod
    def from_log_probs(
        cls,
        log_probs: Mapping[str, float],
        *,
        split: str = "whitespace",
        word_prefix: str | None = WORD_PREFIX,
        special_tokens: Sequence[str] = (),
        name: str = "unigram",
    ) -> "UnigramTokenizer":
        """A one-step tokenizer from ``{piece: natural log-probability}`` (ids in that order)."""
        return cls(
            list(log_probs),
            [[round(lp * SCORE_SCALE) for lp in log_probs.values()]],
            parse_split(split),
            word_prefix=word_prefix,
            special_tokens=special_tokens,
            name=name,
        )

    # -- vocabulary ---------------------------------------------------------------------------

    @property
    def n_steps(self) -> int:
        return len(self.scores)

    def _step_key(self, step: int | None) -> int:
        last = len(self.scores) - 1
        return last if step is None else max(0, min(int(step), last))

    def n_vocab_at(self, step: int | None = None) -> int:
        return self.n_special + len(self.scores[self._step_key(step)])

    def log_prob(self, token_id: int, *, step: int | None = None) -> float | None:
        """Natural log-probability of a piece at `step` (None if it is not in that vocabulary)."""
        self._check_ids([token_id])
        k = self._step_key(step)
        i = token_id - self.n_special
        return self.scores[k][i] / SCORE_SCALE if 0 <= i < len(self.scores[k]) else None

    def piece_lattice(self, step: int | None = None) -> PieceLattice:
        """The encoder of the vocabulary at `step` (its ids are piece indices: id ``n_special + i``
        is piece i; -1 is an unknown character), made on first use (a few steps are kept)."""
        k = self._step_key(step)
        hit = self._lattices.get(k)
        if hit is None:
            if len(self._lattices) >= _N_VOCABS:
                del self._lattices[next(iter(self._lattices))]
            sc = self.scores[k]
            hit = self._lattices[k] = PieceLattice(self.pieces[:len(sc)], sc, mode=INT, unk_id=UNK_ID,
                                                   unk_score=(min(sc) if sc else 0) - UNK_PENALTY)
        return hit

    # -- lattices -----------------------------------------------------------------------------

    def _text(self, word: str) -> tuple[str, int]:
        """The lattice string of a word and the offset of the word in it."""
        return (self.word_prefix + word, len(self.word_prefix)) if self.word_prefix else (word, 0)

    def _edges(self, text: str, step: int) -> list[list[Edge]]:
        """edges[t]: the (start, id, score) of the edges ending at t, by increasing start."""
        ns = self.n_special
        return [[(s, UNK_ID if i < 0 else ns + i, sc) for s, i, sc in es]
                for es in self.piece_lattice(step).edges_by_end(text)]

    def _segmentation(self, path: list[tuple[int, int, int]], off: int, score: int, log_z: float) -> Segmentation:
        """`path`: (start, end, id) in the lattice string."""
        forms = [UNK_TOKEN if i == UNK_ID else self.pieces[i - self.n_special] for _, _, i in path]
        spans = tuple((max(a - off, 0), max(b - off, 0)) for a, b, _ in path)
        return Segmentation(tuple(forms), tuple(i for _, _, i in path), spans, score, math.exp(score / SCORE_SCALE - log_z))

    @staticmethod
    def _log_z(edges: list[list[Edge]], scale: float = 1.0) -> list[float]:
        return forward_log_z(edges, scale)

    def _encode_chunk(self, chunk: str, step: int) -> ChunkResult:
        text, off = self._text(chunk)
        ids, ends = self.piece_lattice(step).word_path(text)
        ns = self.n_special
        starts = (0, *ends[:-1])
        return (tuple(UNK_ID if i < 0 else ns + i for i in ids),
                tuple((max(a - off, 0), max(b - off, 0)) for a, b in zip(starts, ends)))

    # -- n-best, sampling, explaining ---------------------------------------------------------

    def nbest(self, word: str, n: int = 5, *, step: int | None = None) -> list[Segmentation]:
        """The `n` best segmentations of `word` (one chunk), best first, with probabilities."""
        text, off = self._text(word)
        edges = self._edges(text, self._step_key(step))
        if len(edges) == 1:
            return [Segmentation((), (), (), 0, 1.0)][:n]
        log_z = self._log_z(edges)[-1]
        return [self._segmentation(path, off, score, log_z) for score, path in nbest_paths(edges, n)]

    def sample(self, word: str, *, alpha: float = 1.0, step: int | None = None,
               rng: random.Random | int | None = None) -> Segmentation:
        """Draw a segmentation with probability proportional to ``p(segmentation) ** alpha``."""
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        text, off = self._text(word)
        edges = self._edges(text, self._step_key(step))
        path, score = sample_path(edges, alpha, rng)
        return self._segmentation(path, off, score, self._log_z(edges)[-1])

    def encode_sampled(self, text: str, *, alpha: float = 1.0, step: int | None = None,
                       rng: random.Random | int | None = None) -> Encoding:
        """`encode_ordinary` with every chunk segmented by `sample` (not cached)."""
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        out = Encoding([], [], [], [], [], [])
        chunk_spans = self.splitter.spans(text)
        for a, b in chunk_spans:
            seg = self.sample(text[a:b], alpha=alpha, step=step, rng=rng)
            out.unknown.extend(len(out.ids) + k for k, i in enumerate(seg.ids) if i == UNK_ID)
            out.ids.extend(seg.ids)
            out.tokens.extend(self._id_bytes[i] for i in seg.ids)
            out.spans.extend((a + x, a + y) for x, y in seg.spans)
        if not self.splitter.lossless:
            out.dropped.extend(uncovered(chunk_spans, len(text)))
        return out

    def explain(self, word: str, *, step: int | None = None, n: int = 5) -> UnigramExplanation:
        """The lattice of `word` (one chunk), its best and n best segmentations, and log Z."""
        k = self._step_key(step)
        text, off = self._text(word)
        edges = self._edges(text, k)
        lattice = sorted(
            (LatticeEdge(max(s - off, 0), max(t - off, 0), i,
                         UNK_TOKEN if i == UNK_ID else self.pieces[i - self.n_special], sc)
             for t, es in enumerate(edges) for s, i, sc in es),
            key=lambda e: (e.start, e.end),
        )
        counts = [1] + [0] * (len(edges) - 1)
        for t in range(1, len(edges)):
            counts[t] = sum(counts[s] for s, _, _ in edges[t])
        nb = self.nbest(word, max(1, n), step=k)
        return UnigramExplanation(word, tuple(lattice), nb[0], tuple(nb), self._log_z(edges)[-1], counts[-1])

    # -- decoding -----------------------------------------------------------------------------

    def _surface(self, token_id: int, first: bool) -> str:
        special = self._special_surface(token_id)
        if special is not None:
            return special
        piece = self.pieces[token_id - self.n_special]
        prefix = self.word_prefix
        if prefix is None:
            return piece
        out = piece.replace(prefix, " ")
        return out[1:] if first and piece.startswith(prefix) else out


# -- n-best and sampling on edge lists (also used to explain loaded Unigram models) -------------------


def forward_log_z(edges: list[list[Edge]], scale: float = 1.0) -> list[float]:
    """Forward log-sums over all segmentations, with scores multiplied by `scale`."""
    f = [0.0] + [-math.inf] * (len(edges) - 1)
    for t in range(1, len(edges)):
        vals = [f[s] + scale * sc / SCORE_SCALE for s, _, sc in edges[t]]
        m = max(vals) if vals else -math.inf
        f[t] = m + math.log(sum(math.exp(v - m) for v in vals)) if m > -math.inf else m
    return f


def nbest_paths(edges: list[list[Edge]], n: int) -> list[tuple[int, list[tuple[int, int, int]]]]:
    """The `n` best (score, path) pairs, best first (exact k-best Viterbi: each node keeps its
    k best partial paths)."""
    # lists[t]: the best partial paths to t as (score, previous node, rank there, id)
    lists: list[list[tuple[int, int, int, int]]] = [[(0, -1, -1, -1)]]
    for t in range(1, len(edges)):
        heap = [(-(lists[s][0][0] + sc), s, 0, i, sc) for s, i, sc in edges[t] if lists[s]]
        heapq.heapify(heap)
        out: list[tuple[int, int, int, int]] = []
        while heap and len(out) < n:
            neg, s, j, i, sc = heapq.heappop(heap)
            out.append((-neg, s, j, i))
            if j + 1 < len(lists[s]):
                heapq.heappush(heap, (-(lists[s][j + 1][0] + sc), s, j + 1, i, sc))
        lists.append(out)
    result = []
    for score, s, j, i in lists[-1]:
        path = [(s, len(edges) - 1, i)]
        while s > 0:
            _, s2, j, i = lists[s][j]
            path.append((s2, s, i))
            s = s2
        path.reverse()
        result.append((score, path))
    return result


def sample_path(edges: list[list[Edge]], alpha: float, rng: random.Random) -> tuple[list[tuple[int, int, int]], int]:
    """A path drawn with probability proportional to ``p(path) ** alpha`` (forward filtering,
    backward sampling), with its score."""
    f = forward_log_z(edges, alpha)
    t = len(edges) - 1
    path = []
    score = 0
    while t > 0:
        u = rng.random()
        acc = 0.0
        choice = edges[t][-1]
        for e in edges[t]:
            acc += math.exp(f[e[0]] + alpha * e[2] / SCORE_SCALE - f[t])
            if u < acc:
                choice = e
                break
        s, i, sc = choice
        path.append((s, t, i))
        score += sc
        t = s
    path.reverse()
    return path, score
