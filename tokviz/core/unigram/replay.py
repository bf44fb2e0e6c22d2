"""Replaying a Unigram timeline: what each round did to the vocabulary and the corpus."""

from __future__ import annotations


def unigram_series(timeline) -> tuple[list[int], list[float], list[int]]:
    """Per round: vocabulary size, corpus log-likelihood, corpus length in tokens (Viterbi)."""
    rounds = timeline.rounds
    return ([r.vocab_size for r in rounds], [r.log_likelihood for r in rounds],
            [r.viterbi_tokens for r in rounds])
