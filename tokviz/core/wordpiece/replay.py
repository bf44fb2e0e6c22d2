"""Replaying a WordPiece timeline: scored merge decisions, merge trees and greedy match traces.

- `wordpiece_decision(timeline, k)`: the candidates of the merge that led to step k, with
  score = count(ab) / (count(a) · count(b)) next to the raw counts, the winner marked, ties
  (equal scores as exact fractions) explained, and a note when a less frequent pair won.
- `wordpiece_tree(timeline, id)`: a WordPiece token down to its characters.
- `wordpiece_trace(tokenizer, word, k)`: greedy longest-match-first, match by match.

What it leaves out: widgets (``tokviz.panels.timeline.wordpiece``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tokviz.core.algorithm.records import TraceStep, TreeNode, steps_tree


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
