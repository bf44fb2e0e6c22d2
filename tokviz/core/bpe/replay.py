"""Replaying a training timeline at step k: segmentations, candidates, merge trees, word traces.

Everything here is derived from a `Timeline` (the one source of truth) and its `BpeTokenizer`;
step k means "the first k merges", so the merge that produced step k has rank ``k - 1`` and made
id ``base_size + k - 1``.

- `segment_text(tokenizer, text, k)`: the tokens of a piece of text at step k, with the indices
  of the tokens that merge k just created ("fresh" tokens).
- `segment_words(tokenizer, table, k)`: the same for a word-frequency table, one row per word.
- `decision_at(timeline, k)`: the candidates of the merge that led to step k (or of the first
  merge at k = 0), the winner marked, ties explained (first occurrence wins).
- `merge_tree(timeline, id)`: a token down to base units.
- `trace_word(tokenizer, word, k)`: how a word is segmented, merge by merge.

What it leaves out: colours, fonts and widgets (``tokviz.panels.timeline_*``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from tokviz.core.algorithm.protocol import StepTimeline as Timeline  # a BPE `Timeline`
from tokviz.core.algorithm.records import Segmentation, TraceStep, TreeNode, steps_tree
from tokviz.core.encoding import Encoding

from .tokenizer import BpeTokenizer


@dataclass(frozen=True, slots=True)
class WordRow:
    """One row of a word-frequency table at step k."""

    word: str
    count: int
    segmentation: Segmentation


def new_id_at(timeline_or_tokenizer, k: int) -> int | None:
    """Id of the token merge k created (``base_size + k - 1``), or None at step 0."""
    return timeline_or_tokenizer.base_size + k - 1 if k > 0 else None


def segment_text(tokenizer: BpeTokenizer, text: str, k: int) -> Segmentation:
    """Tokens of `text` with the first `k` merges, and which of them merge k created.

    >>> from tokviz.core.bpe.timeline import train, TrainSettings
    >>> tl = train(TrainSettings(units="chars", split="whitespace", merges=1), texts=["aa aa b"])
    >>> seg = segment_text(tl.tokenizer(), "aa b", 1)
    >>> seg.ids, seg.fresh
    ((2, 1), (0,))
    """
    enc: Encoding = tokenizer.encode_ordinary(text, step=k)
    new = new_id_at(tokenizer, min(k, tokenizer.n_merges))
    fresh = tuple(i for i, t in enumerate(enc.ids) if t == new) if new is not None else ()
    return Segmentation(text, tuple(enc.ids), tuple(enc.spans), fresh, k)


MAX_FORWARD = 4096  # forward jumps up to this many merges re-encode only the chunks they change
# ... when no final encoding is at hand to split back from (a training run moving on); with one,
# a jump of more merges than this splits the final encoding back: a scrub costs ~1 ms, not ~10
SHORT_FORWARD = 64


class WindowSegmenter:
    """Segments one fixed text at any step; stepping forward re-encodes only the chunks where one
    of the merges stepped over finds its pair (what playback does 60 times a second, and what a
    training run's live view does as merges stream in: see `follow`).

    Exact: after the first r merges are applied exhaustively, merge r + 1 can only fire where its
    pair is adjacent, and no earlier merge becomes applicable again (new ids have later ranks). So
    a chunk in which no merge from step k to step m finds its pair (checked in order, on ids that
    did not change) has the same ids at m as at k; the others are encoded afresh at m.

    >>> from tokviz.core.bpe.timeline import train, TrainSettings
    >>> tl = train(TrainSettings(units="chars", split="whitespace", merges=3), texts=["abc abc ab"])
    >>> w = WindowSegmenter(tl.tokenizer(), "abc ab")
    >>> [w.at(k).ids == segment_text(tl.tokenizer(), "abc ab", k).ids for k in range(4)]
    [True, True, True, True]
    """

    def __init__(self, tokenizer: BpeTokenizer, text: str) -> None:
        self.tokenizer = tokenizer
        self.text = text
        self._chunk_spans = tokenizer.splitter.spans(text)  # [(start, end)]
        self._k: int | None = None
        self._hits: list[tuple] = []  # per chunk: (ids, spans relative to the chunk)
        self._final: list[tuple] | None = None  # per chunk: (ids, spans) after every merge
        self.reencoded = 0  # chunks re-encoded by the last `at` (for tests and benchmarks)

    def follow(self, tokenizer: BpeTokenizer) -> bool:
        """Adopt `tokenizer` when it extends the current one (the same units, split and specials,
        the same merges and more: a training run that moved on), keeping the segmentation reached
        so far, so the next `at` steps forward over the new merges only. False (nothing changed)
        when it does not extend it."""
        old = self.tokenizer
        if tokenizer is old:
            return True
        n = len(old.merges)
        if (tokenizer.base is not old.base or tokenizer.splitter != old.splitter or tokenizer.unk_id != old.unk_id
                or tokenizer.special_tokens != old.special_tokens or len(tokenizer.merges) < n
                or tokenizer.merges[:n] != old.merges):
            return False
        self.tokenizer, self._final = tokenizer, None  # the final encodings change with new merges
        return True

    def at(self, k: int) -> Segmentation:
        tok, text = self.tokenizer, self.text
        limit = tok.clamp_step(k)
        spans = self._chunk_spans
        ahead = limit - self._k if self._k is not None else 0
        if 0 < ahead <= (MAX_FORWARD if self._final is None else SHORT_FORWARD):
            hits = list(self._hits)
            changed = self._changed_chunks(hits, self._k, limit)
            for c in changed:
                s, e = spans[c]
                hits[c] = tok.encode_chunk(text[s:e], step=limit, cached=False)
            n = len(changed)
        elif self._k == limit:
            hits, n = self._hits, 0
        else:  # a jump: split a later encoding back (`unmerge_chunk`), no merging from scratch
            if self._final is None:
                self._final = [tok.encode_chunk(text[s:e]) for s, e in spans]
            later = self._hits if self._k is not None and self._k > limit else self._final
            top = tok.base_size + limit  # a chunk of ids all below this has no merge from `limit` on
            hits = [hit if not hit[0] or max(hit[0]) < top else tok.unmerge_chunk(text[s:e], hit[0], limit)
                    for (s, e), hit in zip(spans, later)]
            n = sum(new is not old for new, old in zip(hits, later))
        self._k, self._hits, self.reencoded = limit, hits, n
        ids: list[int] = []
        out_spans: list[tuple[int, int]] = []
        for (s, _e), (t_ids, rel) in zip(spans, hits):
            ids.extend(t_ids)
            out_spans.extend([(s + x, s + y) for x, y in rel])
        new = new_id_at(tok, limit)
        fresh = tuple(i for i, t in enumerate(ids) if t == new) if new is not None else ()
        return Segmentation(text, tuple(ids), tuple(out_spans), fresh, limit)

    def _changed_chunks(self, hits: list[tuple], start: int, limit: int) -> list[int]:
        """The chunks some merge of rank start..limit-1 applies to (see the class doc)."""
        holding: dict[tuple[int, int], list[int]] = {}  # adjacent pair -> the chunks holding it
        for c, (ids, _rel) in enumerate(hits):
            for pair in set(pairwise(ids)):
                holding.setdefault(pair, []).append(c)
        merges, changed = self.tokenizer.merges, set()
        for a, b in merges[start:limit]:
            changed.update(holding.get((a, b), ()))
        return sorted(changed)


def segment_words(tokenizer: BpeTokenizer, table: Mapping[str, int], k: int,
                  *, limit: int | None = None) -> list[WordRow]:
    """One row per word of a word-frequency table (in table order), segmented at step k."""
    rows = []
    for i, (word, count) in enumerate(table.items()):
        if limit is not None and i >= limit:
            break
        rows.append(WordRow(word, count, segment_text(tokenizer, word, k)))
    return rows


@dataclass(frozen=True, slots=True)
class CandidateRow:
    """A candidate pair of one merge decision, ready to show."""

    pair: tuple[int, int]
    count: int
    first_chunk: int
    first_offset: int
    winner: bool
    tied: bool  # same count as the winner
    reason: str  # why the winner won / why this one lost ("" when obvious)


@dataclass(frozen=True, slots=True)
class Decision:
    """The merge decision shown at step k: which rank it is and its candidates."""

    rank: int | None  # None: no merge to show (empty timeline)
    upcoming: bool  # True at k = 0 (the first merge, not yet applied)
    candidates: tuple[CandidateRow, ...]


def decision_at(timeline: Timeline, k: int) -> Decision:
    """The decision that produced step k (rank k - 1), or at k = 0 the first one.

    Ties: the candidate with the same count whose first occurrence comes first (earlier chunk,
    then earlier position) won, or with tie-break hf the smaller pair in Hugging Face's id order;
    every tied candidate says so.
    """
    n = timeline.n_merges
    if n == 0:
        return Decision(None, False, ())
    k = max(0, min(int(k), n))
    rank = k - 1 if k > 0 else 0
    step = timeline.steps[rank]
    cands = step.candidates
    if not cands:
        return Decision(rank, k == 0, (CandidateRow(step.pair, step.count, -1, -1, True, False, ""),))
    win = cands[0]
    n_tied = sum(1 for c in cands if c.count == win.count)
    hf = getattr(timeline.settings, "tie_break", "first") == "hf"  # smallest pair in HF's id order
    rows = []
    for i, c in enumerate(cands):
        tied = c.count == win.count and n_tied > 1
        if i == 0:
            rule = ("the smaller pair in Hugging Face's id order" if hf else
                    f"first occurrence (chunk {win.first_chunk}, unit {win.first_offset})")
            reason = (f"tie with {n_tied - 1} other pair{'s' if n_tied > 2 else ''}: won by "
                      f"{rule}") if tied else "highest count"
        elif tied:
            reason = ("tie: lost to a smaller pair in Hugging Face's id order" if hf else
                      f"tie: lost by later first occurrence (chunk {c.first_chunk}, unit {c.first_offset})")
        else:
            reason = f"{win.count - c.count:,} fewer"
        rows.append(CandidateRow(c.pair, c.count, c.first_chunk, c.first_offset, i == 0, tied, reason))
    return Decision(rank, k == 0, tuple(rows))


def merge_tree(timeline: Timeline, token_id: int, *, max_nodes: int = 2000) -> TreeNode:
    """The merge tree of `token_id` down to base units (bytes or characters).

    >>> from tokviz.core.bpe.timeline import train, TrainSettings
    >>> tl = train(TrainSettings(units="chars", split="whitespace", merges=2), texts=["abc abc"])
    >>> t = merge_tree(tl, 4); (t.rank, [c.id for c in t.children], t.leaves())
    (1, [3, 2], [0, 1, 2])
    """
    return steps_tree(timeline.steps, timeline.base_size, token_id, max_nodes=max_nodes)


def trace_word(tokenizer: BpeTokenizer, word: str, k: int | None = None) -> list[TraceStep]:
    """How `word` is segmented merge by merge with the first `k` merges (all by default).

    The word is treated as one chunk (the end-of-word marker, if any, is appended).
    """
    return [TraceStep(e.rank, e.pair, e.id, e.ids) for e in tokenizer.explain(word, step=k)]


def series(timeline: Timeline) -> tuple[list[int], list[int], list[int]]:
    """Per step 0..N: corpus length in tokens, vocabulary size, winning count (0 at step 0)."""
    steps = timeline.steps
    base = timeline.base_size
    length = [timeline.corpus_length] + [s.length for s in steps]
    vocab = list(range(base, base + len(steps) + 1))
    count = [0] + [s.count for s in steps]
    return length, vocab, count


def token_text(vocab: Sequence[bytes], ids: Sequence[int], sep: str = " ") -> str:
    """``[108, 111]`` -> ``'l o'`` (raw text; the display layer makes it visible)."""
    return sep.join(vocab[i].decode("utf-8", "replace") for i in ids)
