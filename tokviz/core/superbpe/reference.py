"""A deliberately slow, obviously correct SuperBPE trainer: the reference the real one must match.

Stage 1 is the BPE reference (`tokviz.core.bpe.reference.oracle_train`) on the stage-1 chunks,
t merges at most. Stage 2 cuts the texts with the authors' stage-2 regex as Hugging Face's
isolated ``Split`` does (matches and the text between them), written here with `regex.finditer`
rather than `tokviz.core.superbpe.split`; applies the stage-1 merges to each chunk in rank order
(`oracle_encode_chunk`), then recounts every pair at every step exactly as the BPE reference does
(ties: first occurrence, chunks in order of first appearance, offsets in stage-2 starting tokens).
"""

from __future__ import annotations

import regex

from tokviz.core.bpe.reference import (
    OracleStep,
    base_units,
    oracle_counts,
    oracle_encode_chunk,
    oracle_merges,
    oracle_train,
)

AUTHORS_STAGE_TWO = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"


def oracle_stage_two_split(text: str) -> list[str]:
    """Matches of the stage-2 regex and the text between them, in order."""
    out, pos = [], 0
    for m in regex.finditer(AUTHORS_STAGE_TWO, text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        out.append(m.group())
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def oracle_superbpe(texts: list[str], *, split: str = "gpt4", transition: int, max_merges: int | None = None,
                    units: str = "bytes", min_count: int = 2, n_candidates: int = 5) -> tuple[list[OracleStep], int]:
    """(every merge, the number stage 1 made). `max_merges` counts both stages."""
    first = transition if max_merges is None else min(transition, max_merges)
    counts1 = oracle_counts(texts, split)
    steps = oracle_train(counts1, units=units, max_merges=first, min_count=min_count, n_candidates=n_candidates)
    n1 = len(steps)
    if max_merges is not None and n1 >= max_merges:
        return steps, n1
    counts2: dict[str, int] = {}
    for text in texts:
        for chunk in oracle_stage_two_split(text):
            counts2[chunk] = counts2.get(chunk, 0) + 1
    vocab, seqs = base_units(list(counts1), units, None)
    vocab, seqs = base_units(list(counts2), units, None) if units == "bytes" else (vocab, None)
    if seqs is None:  # character units: the stage-1 alphabet (the same characters) numbers them
        index = {v.decode("utf-8"): i for i, v in enumerate(vocab)}
        seqs = [[index[ch] for ch in c] for c in counts2]
    base_size = len(vocab)
    merges = [s.pair for s in steps]
    vocab = vocab + [s.token for s in steps]
    seqs = [oracle_encode_chunk(seq, merges, base_size) for seq in seqs]
    oracle_merges(seqs, list(counts2.values()), vocab, steps, max_merges=max_merges, min_count=min_count,
                  n_candidates=n_candidates)
    return steps, n1
