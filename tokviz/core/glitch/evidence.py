"""The evidence the glitch finder weighs, from a tokenizer and a corpus (no model weights).

- The round trip (shared with the Compare view's vocabulary health): does decoding a token and
  encoding the text give that token back (`round_trip_category`)?
- The merge graph (`MergeGraph`): for each token its merge rank, the two parts a merge joined and
  how many later merges use it as a part. Tokenizers without merges (WordPiece, Unigram) have no
  graph: each token is its own only piece and its id order stands in for the merge order.
- How often each token occurs in the corpus, as a token or inside a longer token's merge tree
  (`seen_counts`), against how often its merge rank predicts (`expected_counts`): BPE merges the
  most frequent pair first, so on text like the tokenizer's own training text the k-th merge is
  roughly Zipf-distributed, about ``0.1 * N / (k + base)`` times in N tokens. A piece the corpus
  holds far less often than that (`rarity`) was frequent only in the tokenizer's training data.
- How much of a token later merges swallow (`absorption`): a token made at merge r and used as a
  part at merge r' was, by the same Zipf estimate, about ``r / r'`` times as frequent as the pair
  that used it. When that share reaches 1 (``oreAndOnline`` at 40,240, ``InstoreAndOnline`` at
  40,241), BPE's own training text almost never kept the token on its own: a model trained on text
  tokenized that way rarely saw it, whatever a corpus holds now.

What this leaves out: weighing the evidence (`score`) and running over a whole vocabulary (`report`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CATEGORIES = {
    "ok": "decodes and re-encodes to itself",
    "unreachable": "its text encodes to other tokens",
    "undecodable": "its bytes are not text on their own (partial UTF-8)",
    "special": "a special token",
}
ZIPF = 0.1  # share of the most frequent word: the k-th most frequent type occurs ~ZIPF * N / k times


def round_trip_category(tok, i: int, data: bytes, special: set[int]) -> tuple[str, str | None]:
    """(category, text or None): a key of `CATEGORIES` for token `i` with bytes `data`: a
    byte-level BPE whose only merge makes "aa" gives ``("ok", "aa")`` for it, and
    ``("undecodable", None)`` for the lone byte 0xC3."""
    if i in special:
        return "special", None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "undecodable", None
    return ("ok" if tok.encode_ids(text) == [i] else "unreachable"), text


@dataclass(frozen=True)
class MergeGraph:
    """Arrays over token ids: `rank` (the merge that made the token, -1 for base tokens),
    `left`/`right` (its parts, -1 when none), `parents` (how many merges use it as a part)."""

    rank: np.ndarray
    left: np.ndarray
    right: np.ndarray
    parents: np.ndarray
    n_merges: int

    @classmethod
    def of(cls, tok, n_vocab: int) -> MergeGraph:
        """The graph of any tokenizer (`merge_list` where it has one; none for WordPiece/Unigram)."""
        from tokviz.core.explain.tokens import merge_list

        try:
            merges = merge_list(tok)
        except AttributeError:  # a tokenizer without merges
            merges = []
        rank = np.full(n_vocab, -1, np.int64)
        left = np.full(n_vocab, -1, np.int64)
        right = np.full(n_vocab, -1, np.int64)
        for m in merges:
            if 0 <= m.id < n_vocab and m.pair is not None:  # a rank no two lower ranks make: no parts
                rank[m.id], left[m.id], right[m.id] = m.index, m.pair[0], m.pair[1]
        parents = np.zeros(n_vocab, np.int64)
        ok = left >= 0
        for side in (left[ok], right[ok]):
            parents += np.bincount(side[side < n_vocab], minlength=n_vocab)[:n_vocab]
        return cls(rank, left, right, parents, len(merges))

    def all_pieces(self) -> list[tuple[int, ...]]:
        """`pieces` of every id at once, each tree built from its parts' (a walk per token took
        most of a GPT-2 glitch scan): ``[i]`` + the left part's pieces + the right part's not
        already there, the order of `pieces`' walk."""
        rank, left, right = self.rank.tolist(), self.left.tolist(), self.right.tolist()
        out: list[tuple[int, ...]] = [(i,) for i in range(len(rank))]
        walked: set[int] = set()  # trees that may hold later merges (even the token itself)
        for i in sorted((i for i, r in enumerate(rank) if r >= 0), key=rank.__getitem__):
            a, b = left[i], right[i]
            if (not (0 <= a < len(rank) and 0 <= b < len(rank)) or max(rank[a], rank[b]) >= rank[i]
                    or a in walked or b in walked):
                out[i] = tuple(self.pieces(i))  # parts not made before it: walk it
                walked.add(i)
                continue
            lp = out[a] if rank[a] >= 0 else ()
            rp = out[b] if rank[b] >= 0 else ()
            if not lp:
                out[i] = (i, *rp)
            elif not rp:
                out[i] = (i, *lp)
            else:
                have = set(lp)
                out[i] = (i, *lp, *(j for j in rp if j not in have))
        return out

    def pieces(self, i: int) -> list[int]:
        """The distinct merged tokens of `i`'s merge tree, `i` first (just ``[i]`` without merges)."""
        out, seen, stack = [], set(), [i]
        while stack:
            j = stack.pop()
            if j < 0 or j in seen:
                continue
            seen.add(j)
            if j != i and self.rank[j] < 0:
                continue  # a base token: not a merge of its own
            out.append(j)
            stack.extend((int(self.right[j]), int(self.left[j])))
        return out

    def order(self) -> np.ndarray:
        """The rank each token stands at: its merge rank, else its position among the ids."""
        return np.where(self.rank >= 0, self.rank + self.base, np.arange(len(self.rank)))

    @property
    def base(self) -> int:
        """How many tokens come before the first merge (256 for byte-level BPE)."""
        merged = self.rank >= 0
        return int(np.flatnonzero(merged).min()) if merged.any() else 0


def seen_counts(graph: MergeGraph, counts: np.ndarray) -> np.ndarray:
    """How often each id occurs in the corpus as a token or inside a token's merge tree.

    >>> g = MergeGraph(np.array([-1, -1, 0, 1]), np.array([-1, -1, 0, 2]), np.array([-1, -1, 1, 1]),
    ...                np.zeros(4, np.int64), 2)  # 2 = 0+1, 3 = 2+1
    >>> seen_counts(g, np.array([0, 0, 1, 2])).tolist()  # "3" twice holds "2" twice, "1" three times
    [3, 5, 3, 2]
    """
    seen = counts.astype(np.int64).copy()
    merged = np.flatnonzero(graph.rank >= 0)
    for i in merged[np.argsort(-graph.rank[merged], kind="stable")]:  # the latest merge first
        if seen[i]:
            seen[graph.left[i]] += seen[i]
            seen[graph.right[i]] += seen[i]
    return seen


def expected_counts(graph: MergeGraph, n_corpus_tokens: int) -> np.ndarray:
    """How often each token's merge rank predicts it in `n_corpus_tokens` tokens (see module doc).
    Base tokens (bytes) of a tokenizer with merges have no rank to go by: 0."""
    expected = ZIPF * n_corpus_tokens / (graph.order() + 1.0)
    if graph.n_merges:
        expected[graph.rank < 0] = 0.0
    return expected


def rarity(expected: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """``max(0, log(1 + expected) - log(1 + seen))``: 0 when the corpus holds a piece as often
    as its rank predicts, about ``log(expected)`` when it never does."""
    return np.maximum(0.0, np.log1p(expected) - np.log1p(seen))


def absorption(graph: MergeGraph) -> np.ndarray:
    """How fully later merges swallow each token (0 to 1, see module doc): half the summed share
    ``order / order'`` over the merges using it as a part (capped at 1), half the largest one,
    squared (a merge right after it decides, many distant ones only add up).

    >>> g = MergeGraph(np.array([-1, -1, 0, 1]), np.array([-1, -1, 0, 2]), np.array([-1, -1, 1, 1]),
    ...                np.zeros(4, np.int64), 2)  # 2 = 0+1, 3 = 2+1: 3 uses 2 right after it is made
    >>> absorption(g).round(2).tolist()
    [0.0, 0.0, 0.66, 0.0]
    """
    n = len(graph.rank)
    order = graph.order().astype(np.float64) + 1.0
    merged = np.flatnonzero(graph.left >= 0)
    total, largest = np.zeros(n), np.zeros(n)
    for side in (graph.left[merged], graph.right[merged]):
        keep = side < n
        share = order[side[keep]] / order[merged[keep]]
        np.add.at(total, side[keep], share)
        np.maximum.at(largest, side[keep], share)
    out = 0.5 * np.minimum(total, 1.0) + 0.5 * np.minimum(largest, 1.0) ** 2
    out[graph.rank < 0] = 0.0  # bytes are the alphabet: every text is made of them
    return out
