"""WordPiece in its plainest form: the reference a reader studies first, and the tests' oracle.

Training (the rule of BERT's WordPiece as the Hugging Face course teaches it). A word starts as
characters: the first a plain piece (``h``), every other a continuation piece (``##u``). Each step
merges the adjacent pair (a, b) with the highest score

    score(a, b) = count(ab) / (count(a) * count(b))

where the counts are weighted occurrences in the current segmentation of the corpus (naive:
``##a ##a ##a`` holds the pair twice). A frequent pair of frequent pieces scores low; a pair whose
parts rarely occur apart scores high. Scores are exact fractions; equal scores go to the pair that
occurs first (words in order of first appearance, then character offset). Pairs below `min_count`
never win. The merged piece drops the right part's ``##``: ``h`` + ``##u`` -> ``hu``, ``##u`` +
``##g`` -> ``##ug``; occurrences are replaced left to right.

Encoding is greedy longest-match-first: from the start of a word take the longest plain piece
that is a prefix, then from each later position the longest continuation piece; when nothing
matches at some position, the whole word is one ``[UNK]``, as is a word longer than
`max_word_chars`.

Every step recounts everything: no speed tricks. `tokviz.core.wordpiece.trainer` does the same
incrementally (and keeps ids, candidates and scores for the views); `tokviz.core.wordpiece.tokenizer`
encodes at any step. If they and this disagree, believe this. Pieces are their vocabulary forms
here, so a word that itself starts with ``##`` would confuse it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

CONTINUATION = "##"
UNK = "[UNK]"
MAX_WORD_CHARS = 100


@dataclass(frozen=True)
class ReferenceStep:
    """One merge: the pair (vocabulary forms), the new piece and the numbers that made it win."""

    pair: tuple[str, str]
    token: str
    score: Fraction
    count: int
    left_count: int
    right_count: int
    length: int  # weighted corpus length in pieces after the merge
    # (pair, score, count, left count, right count, first word, first offset), winner first
    candidates: tuple


def characters(word: str) -> list[str]:
    """A word as base pieces: ``characters("hug") == ["h", "##u", "##g"]``."""
    return [word[0]] + [CONTINUATION + c for c in word[1:]] if word else []


def train(counts: dict[str, int], *, max_merges: int | None = None, min_count: int = 1,
          n_candidates: int = 5) -> list[ReferenceStep]:
    """The merges of a corpus given as ``{word: count}`` (words in order of first appearance).

    >>> [s.token for s in train({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}, max_merges=2)]
    ['##gs', 'hu']
    """
    words = [characters(w) for w in counts]
    weights = list(counts.values())
    steps: list[ReferenceStep] = []
    while max_merges is None or len(steps) < max_merges:
        piece_count: dict[str, int] = {}
        pair_count: dict[tuple[str, str], int] = {}
        first: dict[tuple[str, str], tuple[int, int]] = {}  # pair -> (word, character offset)
        for wi, (seq, w) in enumerate(zip(words, weights)):
            offset = 0
            for i, piece in enumerate(seq):
                piece_count[piece] = piece_count.get(piece, 0) + w
                if i + 1 < len(seq):
                    pair = (piece, seq[i + 1])
                    pair_count[pair] = pair_count.get(pair, 0) + w
                    first.setdefault(pair, (wi, offset))
                offset += len(piece) - (len(CONTINUATION) if i > 0 else 0)
        eligible = [p for p in pair_count if pair_count[p] >= min_count]
        if not eligible:
            break
        score = {p: Fraction(pair_count[p], piece_count[p[0]] * piece_count[p[1]]) for p in eligible}
        ranked = sorted(eligible, key=lambda p: (-score[p], first[p]))
        best = a, b = ranked[0]
        new = a + b[len(CONTINUATION):]
        words = [merge(seq, best, new) for seq in words]
        length = sum(len(seq) * w for seq, w in zip(words, weights))
        cands = tuple((p, score[p], pair_count[p], piece_count[p[0]], piece_count[p[1]], *first[p])
                      for p in ranked[:n_candidates])
        steps.append(ReferenceStep(best, new, score[best], pair_count[best], piece_count[a], piece_count[b],
                                   length, cands))
    return steps


def merge(seq: list[str], pair: tuple[str, str], new: str) -> list[str]:
    """`seq` with every occurrence of `pair` replaced by `new`, left to right."""
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and (seq[i], seq[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def vocabulary(counts: dict[str, int], steps: list[ReferenceStep]) -> list[str]:
    """Base pieces (plain first characters, then continuation ones, each sorted) + merged pieces."""
    first = sorted({w[0] for w in counts if w})
    rest = sorted({c for w in counts for c in w[1:]})
    return first + [CONTINUATION + c for c in rest] + [s.token for s in steps]


def encode_word(word: str, vocab: set[str] | dict[str, int], *, max_word_chars: int = MAX_WORD_CHARS) -> list[str]:
    """Greedy longest-match-first pieces of one word.

    >>> encode_word("unbelievable", {"un", "##believ", "##able", "##a", "##b"})
    ['un', '##believ', '##able']
    >>> encode_word("unx", {"un", "##a"})
    ['[UNK]']
    """
    if len(word) > max_word_chars:
        return [UNK]
    pieces, start = [], 0
    while start < len(word):
        prefix = "" if start == 0 else CONTINUATION
        end = len(word)
        while end > start and prefix + word[start:end] not in vocab:
            end -= 1
        if end == start:  # nothing matches here: the whole word is unknown
            return [UNK]
        pieces.append(prefix + word[start:end])
        start = end
    return pieces
