"""Replaying WordPiece and Unigram timelines: what the timeline panel shows at step k.

The BPE counterparts are in `tokviz.core.bpe.replay`; this module reuses its `Segmentation`,
`TreeNode` and `TraceStep` records so the panel draws all algorithms the same way.

- `segment_pieces(timeline, tokenizer, text, k)`: tokens of a text at step k (WordPiece: the
  tokens merge k just made are "fresh"; Unigram: none are).
- `wordpiece_decision(timeline, k)`: the candidates of the WordPiece merge that led to step k, with
  score = count(ab) / (count(a) · count(b)) next to the raw counts, the winner marked, ties
  (equal scores as exact fractions) explained, and a note when a less frequent pair won.
- `wordpiece_tree(timeline, id)`: a WordPiece token down to its characters.
- `wordpiece_trace(tokenizer, word, k)`: greedy longest-match-first, match by match.
- `unigram_series(timeline)`: per round: vocabulary size, log-likelihood, corpus length.

What it leaves out: widgets (``tokviz.panels.timeline.wordpiece``, ``tokviz.panels.timeline.unigram``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tokviz.core.bpe.replay import Segmentation, TraceStep, TreeNode, steps_tree


def segment_pieces(timeline, tokenizer, text: str, k: int) -> Segmentation:
    """Tokens of `text` at step k of a WordPiece or Unigram timeline.

    >>> from tokviz.core.wordpiece.timeline import WordPieceSettings, train_wordpiece
    >>> tl = train_wordpiece(WordPieceSettings(merges=1), texts=["ab ab ab c"])
    >>> seg = segment_pieces(tl, tl.tokenizer(), "ab c", 1)
    >>> [tl.token_forms()[i] for i in seg.ids], seg.fresh
    (['ab', 'c'], (0,))
    """
    enc = tokenizer.encode_ordinary(text, step=k)
    fresh: tuple[int, ...] = ()
    if timeline.algorithm == "wordpiece" and 0 < k <= timeline.n_merges:
        new = timeline.steps[k - 1].id
        fresh = tuple(i for i, t in enumerate(enc.ids) if t == new)
    return Segmentation(text, tuple(enc.ids), tuple(enc.spans), fresh, k)


@dataclass(frozen=True, slots=True)
class ScoredCandidate:
    """A WordPiece candidate pair of one merge decision, ready to show."""

    pair: tuple[int, int]
    score: float
    count: int  # count(ab)
    left_count: int  # count(a)
    right_count: int  # count(b)
    winner: bool
    tied: bool  # same score (exactly) as the winner
    reason: str


@dataclass(frozen=True, slots=True)
class ScoredDecision:
    rank: int | None  # None: empty timeline
    upcoming: bool  # True at k = 0 (the first merge, not yet applied)
    candidates: tuple[ScoredCandidate, ...]
    note: str  # e.g. "a pair seen 5 times beat one seen 20 times: its parts are rarer"


def _fraction(c) -> Fraction:
    return Fraction(c.count, c.left_count * c.right_count)


def wordpiece_decision(timeline, k: int) -> ScoredDecision:
    """The decision that produced step k (rank k - 1), or at k = 0 the first one.

    >>> from tokviz.core.wordpiece.timeline import WordPieceSettings, train_wordpiece
    >>> corpus = "hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5
    >>> d = wordpiece_decision(train_wordpiece(WordPieceSettings(merges=1), texts=[corpus]), 1)
    >>> w = d.candidates[0]; (w.count, w.left_count, w.right_count, w.winner)
    (5, 20, 5, True)
    """
    n = timeline.n_merges
    if n == 0:
        return ScoredDecision(None, False, (), "")
    k = max(0, min(int(k), n))
    rank = k - 1 if k > 0 else 0
    step = timeline.steps[rank]
    cands = step.candidates or ()
    if not cands:
        row = ScoredCandidate(step.pair, step.score, step.count, step.left_count, step.right_count, True, False,
                              "best score")
        return ScoredDecision(rank, k == 0, (row,), "")
    best = _fraction(cands[0])
    n_tied = sum(1 for c in cands if _fraction(c) == best)
    rows = []
    for i, c in enumerate(cands):
        f = _fraction(c)
        tied = f == best and n_tied > 1
        if i == 0:
            reason = (f"tie with {n_tied - 1} other pair{'s' if n_tied > 2 else ''}: won by first occurrence "
                      f"(word {c.first_chunk}, character {c.first_offset})") if tied else "best score"
        elif tied:
            reason = f"tie: lost by later first occurrence (word {c.first_chunk}, character {c.first_offset})"
        else:
            reason = f"score {float(best / f):.2f}× lower" if f else "score 0"
            if c.count > cands[0].count:
                reason += f" though {c.count:,} > {cands[0].count:,} occurrences"
        rows.append(ScoredCandidate(c.pair, c.score, c.count, c.left_count, c.right_count, i == 0, tied, reason))
    win = cands[0]
    more = [c for c in cands[1:] if c.count > win.count]
    note = ""
    if more:
        top = max(more, key=lambda c: c.count)
        note = (f"A pair seen {win.count:,}× beat one seen {top.count:,}×: its parts are rarer "
                f"({win.left_count:,} · {win.right_count:,} vs {top.left_count:,} · {top.right_count:,}), "
                f"so it is more cohesive")
    return ScoredDecision(rank, k == 0, tuple(rows), note)


def wordpiece_tree(timeline, token_id: int, *, max_nodes: int = 2000) -> TreeNode:
    """A WordPiece token down to its (``##``) characters; base symbols and specials are leaves."""
    first = timeline.n_special + timeline.base_size  # id of the first merge
    return steps_tree(timeline.steps, first, token_id, max_nodes=max_nodes)


def wordpiece_trace(tokenizer, word: str, k: int | None = None) -> list[TraceStep]:
    """Greedy longest-match-first on `word`, one entry per match: ``ids`` = the matches so far
    (the last entry of a word that cannot be covered is the single ``[UNK]``)."""
    out: list[TraceStep] = []
    ids: list[int] = []
    for m in tokenizer.explain(word, step=k):
        ids = [m.id] if m.reason else ids + [m.id]
        out.append(TraceStep(None, None, m.id, tuple(ids)))
    return out


def unigram_series(timeline) -> tuple[list[int], list[float], list[int]]:
    """Per round: vocabulary size, corpus log-likelihood, corpus length in tokens (Viterbi)."""
    rounds = timeline.rounds
    return ([r.vocab_size for r in rounds], [r.log_likelihood for r in rounds],
            [r.viterbi_tokens for r in rounds])


def segment_any(timeline, tokenizer, text: str, k: int) -> Segmentation:
    """`segment_pieces` for WordPiece and Unigram, `tokviz.core.bpe.replay.segment_text` otherwise."""
    if getattr(timeline, "algorithm", "bpe") in ("wordpiece", "unigram"):
        return segment_pieces(timeline, tokenizer, text, k)
    from tokviz.core.bpe.replay import segment_text

    return segment_text(tokenizer, text, k)
