"""Unigram in its plainest form: the reference a reader studies first, and the tests' oracle.

A Unigram model is a set of pieces with probabilities; a word is segmented into the pieces whose
product of probabilities is highest (Viterbi). Training (SentencePiece's recipe) starts from far
too many pieces and shrinks:

1. **Seed**: every single character, plus the `size` most promising longer substrings of the words
   (by ``count * length``; ties: the substring seen first), with ``log(count * length)``
   normalized as log-probabilities. Every word is read as ``▁word``.
2. **EM**: the E-step sums, over every segmentation of every word, how often each piece is used,
   weighted by the segmentation's probability (forward-backward); the M-step sets ``p(piece) =
   expected count / total``.
3. **Prune**: for each piece, the loss of likelihood if its uses went to its best segmentation
   without it; drop the quarter with the smallest loss (never single characters), renormalize,
   run EM again, until `target` pieces are left.

Scores are integers: log-probabilities in units of 2**-20 nat (`SCORE_SCALE`), so a Viterbi sum is
exact and ties are well defined: the higher total wins, then the path whose last piece starts
first. A character no piece covers is ``[UNK]``, scored `UNK_PENALTY` below the least likely piece.

Plain Python, no numpy and no speed tricks: `tokviz.core.unigram.trainer` computes the same with
arrays (and `tokviz.core.unigram.tokenizer` encodes, n-best and samples too). What this leaves out:
steps, ids, special tokens, file formats.
"""

from __future__ import annotations

import math

WORD_PREFIX = "\u2581"  # "▁": marks a word's start
SCORE_SCALE = 1 << 20  # a score is a log-probability times this, rounded
UNK_PENALTY = 10 * SCORE_SCALE
UNK = "[UNK]"


def seed(counts: dict[str, int], *, size: int, max_piece_chars: int = 16, min_count: int = 2,
         prefix: str = WORD_PREFIX) -> dict[str, float]:
    """{piece: log-probability} of the seed vocabulary of ``{word: count}``.

    >>> sorted(seed({"abab": 3, "ab": 2}, size=4, max_piece_chars=3, prefix=""))
    ['a', 'ab', 'aba', 'b']
    """
    found: dict[str, int] = {}  # substring -> weighted occurrences, in order first seen
    for word, n in counts.items():
        text = prefix + word
        for i in range(len(text)):
            for j in range(i + 1, min(len(text), i + max_piece_chars) + 1):
                found[text[i:j]] = found.get(text[i:j], 0) + n
    chars = [s for s in found if len(s) == 1]
    longer = [s for s in found if len(s) > 1 and found[s] >= min_count]
    longer.sort(key=lambda s: -found[s] * len(s))  # a stable sort: ties stay in order first seen
    kept = chars + longer[: max(0, size - len(chars))]
    total = sum(found[s] * len(s) for s in kept)
    return {s: math.log(found[s] * len(s)) - math.log(total) for s in kept}


def _logsumexp(values: list[float]) -> float:
    m = max(values, default=-math.inf)
    return m if m == -math.inf else m + math.log(sum(math.exp(v - m) for v in values))


def em_step(texts: dict[str, int], logp: dict[str, float]) -> tuple[dict[str, float], float]:
    """One E-step and M-step over ``{text: count}``: (new log-probabilities, the corpus
    log-likelihood ``sum count * log Z(text)`` before the step)."""
    expected = dict.fromkeys(logp, 0.0)
    likelihood = 0.0
    for text, n in texts.items():
        edges = [(s, t, text[s:t]) for s in range(len(text)) for t in range(s + 1, len(text) + 1) if text[s:t] in logp]
        alpha = [0.0] + [-math.inf] * len(text)  # log-sum of the paths from the start to each position
        for t in range(1, len(text) + 1):
            alpha[t] = _logsumexp([alpha[s] + logp[p] for s, e, p in edges if e == t])
        beta = [-math.inf] * len(text) + [0.0]  # ... and from each position to the end
        for s in range(len(text) - 1, -1, -1):
            beta[s] = _logsumexp([logp[p] + beta[e] for b, e, p in edges if b == s])
        z = alpha[-1]
        likelihood += n * z
        for s, t, p in edges:
            expected[p] += n * math.exp(alpha[s] + logp[p] + beta[t] - z)
    floored = {p: max(c, 1e-30) for p, c in expected.items()}  # no piece gets log 0
    total = sum(floored.values())
    return {p: math.log(c / total) for p, c in floored.items()}, likelihood


def viterbi(text: str, scores: dict[str, int]) -> list[str]:
    """The best segmentation of `text` under integer `scores` (see the module docstring).

    >>> viterbi("abc", {"a": -5, "b": -5, "ab": -8, "bc": -3})
    ['a', 'bc']
    >>> viterbi("ax", {"a": -5})
    ['a', '[UNK]']
    """
    unk = min(scores.values(), default=0) - UNK_PENALTY
    best: list[int | None] = [0] + [None] * len(text)
    back = [(0, "")] * (len(text) + 1)
    for t in range(1, len(text) + 1):
        for s in range(t):  # starts in increasing order: on a tie the first one stays
            piece = text[s:t]
            score = scores.get(piece, unk if s == t - 1 else None)
            if score is None or best[s] is None:
                continue
            if best[t] is None or best[s] + score > best[t]:
                best[t], back[t] = best[s] + score, (s, piece if piece in scores else UNK)
    out, t = [], len(text)
    while t > 0:
        t, piece = back[t]
        out.append(piece)
    return out[::-1]


def encode_word(word: str, scores: dict[str, int], *, prefix: str = WORD_PREFIX) -> list[str]:
    """The pieces of one word: Viterbi over ``▁word``."""
    return viterbi(prefix + word, scores)


def quantize(logp: dict[str, float]) -> dict[str, int]:
    return {p: round(lp * SCORE_SCALE) for p, lp in logp.items()}


def prune_losses(texts: dict[str, int], logp: dict[str, float]) -> dict[str, float]:
    """How much the corpus likelihood drops when each longer piece is removed (SentencePiece's
    pruning loss): its uses in the Viterbi segmentations move to the pieces that segment it."""
    scores = quantize(logp)
    freq = dict.fromkeys(logp, 0)  # weighted uses in the Viterbi segmentations
    for text, n in texts.items():
        for piece in viterbi(text, scores):
            freq[piece] += n
    total = sum(freq.values())
    loss = {}
    for x in (p for p in logp if len(p) > 1):
        fx = freq[x]
        if fx == 0:
            loss[x] = 0.0  # unused: dropping it costs nothing
            continue
        alt = viterbi(x, {p: s for p, s in scores.items() if p != x})  # x's uses go to these
        denominator = total + fx * (len(alt) - 1)
        loss[x] = fx * (math.log(fx / total) - sum(math.log((freq[y] + fx) / denominator) for y in alt))
    return loss


def prune(texts: dict[str, int], logp: dict[str, float], n_drop: int) -> dict[str, float]:
    """`logp` without the `n_drop` longer pieces whose removal costs least (ties: the lower score,
    then the piece), renormalized."""
    scores = quantize(logp)
    loss = prune_losses(texts, logp)
    dropped = set(sorted(loss, key=lambda p: (loss[p], scores[p], p))[:n_drop])
    kept = {p: lp for p, lp in logp.items() if p not in dropped}
    z = _logsumexp(list(kept.values()))
    return {p: lp - z for p, lp in kept.items()}


def train(counts: dict[str, int], target: int, *, seed_size: int | None = None, max_piece_chars: int = 16,
          prune_fraction: float = 0.25, em_iterations: int = 2,
          prefix: str = WORD_PREFIX) -> list[tuple[dict[str, int], float]]:
    """Rounds of training on ``{word: count}``: (scores, log-likelihood) after each round's EM."""
    texts = {prefix + w: n for w, n in counts.items()}
    logp = seed(counts, size=10 * target if seed_size is None else seed_size, max_piece_chars=max_piece_chars,
                prefix=prefix)
    n_chars = sum(1 for p in logp if len(p) == 1)
    rounds = []
    while True:
        for _ in range(em_iterations):
            logp, _ = em_step(texts, logp)
        rounds.append((quantize(logp), sum(n * _log_z(t, logp) for t, n in texts.items())))
        size = len(logp)
        if size <= max(target, n_chars):
            return rounds
        keep = int(size * (1.0 - prune_fraction))
        keep = target if keep < target * 1.1 else keep  # no tiny last round
        logp = prune(texts, logp, size - max(target, min(keep, size - 1)))


def _log_z(text: str, logp: dict[str, float]) -> float:
    """log of the summed probability of every segmentation of `text`."""
    alpha = [0.0] + [-math.inf] * len(text)
    for t in range(1, len(text) + 1):
        alpha[t] = _logsumexp([alpha[s] + logp[text[s:t]] for s in range(t) if text[s:t] in logp])
    return alpha[-1]
