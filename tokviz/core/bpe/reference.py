"""A deliberately slow, obviously correct BPE trainer: the reference the real trainer must match.

Every step recounts every adjacent pair of the whole (deduplicated, weighted) corpus, picks the
highest count, breaks ties by the pair's first occurrence (chunks in order of first appearance,
then position in the chunk), and merges left to right. Splitting uses tiktoken's patterns copied
here verbatim, so it does not share code with `tokviz.core.text.split`, read with tiktoken's
Unicode 16 tables (`pin_pattern`, checked against tiktoken on every code point). No speed
tricks: if this and `tokviz.core.bpe.trainer` disagree, believe this.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

# tiktoken_ext/openai_public.py, verbatim.
TIKTOKEN_R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
TIKTOKEN_CL100K = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
TIKTOKEN_O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
TIKTOKEN_PATTERNS = {"gpt2": TIKTOKEN_R50K, "gpt4": TIKTOKEN_CL100K, "o200k": TIKTOKEN_O200K}


def oracle_split(text: str, split: str) -> list[str]:
    """Chunks of `text` under a split preset, computed independently of tokviz."""
    if split == "none":
        return [text] if text else []
    if split == "whitespace":
        return text.split()
    from tokviz.core.text.unicode_tables import pin_pattern  # Unicode 16 (checked against tiktoken)

    if split.startswith("regex:"):
        return [c for c in regex.findall(pin_pattern(split[len("regex:"):]), text) if c]
    # In Rust's regex (tiktoken) `$` is end of text; in Python's `regex` that is `\Z`.
    pattern = TIKTOKEN_PATTERNS[split].replace(r"\s++$", r"\s++\Z")
    return [c for c in regex.findall(pin_pattern(pattern), text) if c]


def _without_specials(text: str, specials: tuple[str, ...]) -> list[str]:
    """The ordinary pieces of `text` between special-token occurrences (longest first)."""
    pieces = [text]
    for s in sorted(specials, key=len, reverse=True):
        pieces = [part for piece in pieces for part in piece.split(s)]
    return [p for p in pieces if p]


def oracle_counts(texts: list[str], split: str, specials: tuple[str, ...] = ()) -> dict[str, int]:
    """{chunk: count} in order of first appearance."""
    counts: dict[str, int] = {}
    for text in texts:
        for piece in _without_specials(text, specials):
            for chunk in oracle_split(piece, split):
                counts[chunk] = counts.get(chunk, 0) + 1
    return counts


def oracle_table_counts(table: dict[str, int], split: str) -> dict[str, int]:
    """Chunk counts of a word-frequency table: each word split on its own, times its count."""
    counts: dict[str, int] = {}
    for word, n in table.items():
        if n <= 0:  # a word that never occurs is not part of the corpus
            continue
        for chunk in oracle_split(word, split):
            counts[chunk] = counts.get(chunk, 0) + n
    return counts


@dataclass(frozen=True)
class OracleStep:
    pair: tuple[int, int]
    id: int
    token: bytes
    count: int
    length: int  # weighted corpus length after the merge
    # (pair, count, first chunk, first offset in base symbols) of the best pairs with at least
    # min_count occurrences, winner first
    candidates: tuple[tuple[tuple[int, int], int, int, int], ...]


def base_units(chunks: list[str], units: str, end_of_word: str | None):
    """(token bytes of the base ids, base-id sequences of the chunks)."""
    if units == "bytes":
        vocab = [bytes([i]) for i in range(256)]
        marker = b"" if end_of_word is None else end_of_word.encode("utf-8")
        return vocab, [list(c.encode("utf-8") + marker) for c in chunks]
    symbols = sorted({ch for c in chunks for ch in c} | ({end_of_word} if end_of_word else set()))
    index = {s: i for i, s in enumerate(symbols)}
    seqs = [[index[ch] for ch in c] + ([index[end_of_word]] if end_of_word else []) for c in chunks]
    return [s.encode("utf-8") for s in symbols], seqs


def oracle_train(
    counts: dict[str, int],
    *,
    units: str = "bytes",
    end_of_word: str | None = None,
    max_merges: int | None = None,
    min_count: int = 2,
    n_candidates: int = 5,
) -> list[OracleStep]:
    """Train by recounting everything at every step."""
    chunks = list(counts)
    vocab, seqs = base_units(chunks, units, end_of_word)
    return oracle_merges(seqs, [counts[c] for c in chunks], vocab, [], max_merges=max_merges,
                         min_count=min_count, n_candidates=n_candidates)


def oracle_merges(seqs: list[list[int]], weights: list[int], vocab: list[bytes], steps: list[OracleStep], *,
                  max_merges: int | None = None, min_count: int = 2, n_candidates: int = 5) -> list[OracleStep]:
    """Merge the chunks `seqs` (ids into `vocab`, weighted), recounting everything at every step,
    until `steps` (the merges made so far, appended to) holds `max_merges`; return `steps`.
    First-occurrence offsets count the ids `seqs` start with as one unit each."""
    # width[i][j]: how many starting ids token j of chunk i spans (for first-occurrence offsets)
    widths = [[1] * len(s) for s in seqs]
    while max_merges is None or len(steps) < max_merges:
        pair_counts: dict[tuple[int, int], int] = {}
        first: dict[tuple[int, int], tuple[int, int]] = {}
        for ci, (seq, w, wid) in enumerate(zip(seqs, weights, widths)):
            offset = 0
            for i in range(len(seq) - 1):
                pair = (seq[i], seq[i + 1])
                pair_counts[pair] = pair_counts.get(pair, 0) + w
                if pair not in first:
                    first[pair] = (ci, offset)
                offset += wid[i]
        if not pair_counts:
            break
        ranked = sorted(pair_counts, key=lambda p: (-pair_counts[p], first[p]))
        best = ranked[0]
        if pair_counts[best] < min_count:
            break
        new = len(vocab)
        vocab.append(vocab[best[0]] + vocab[best[1]])
        for ci, seq in enumerate(seqs):
            out, wout, i = [], [], 0
            wid = widths[ci]
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    out.append(new)
                    wout.append(wid[i] + wid[i + 1])
                    i += 2
                else:
                    out.append(seq[i])
                    wout.append(wid[i])
                    i += 1
            seqs[ci], widths[ci] = out, wout
        length = sum(len(s) * w for s, w in zip(seqs, weights))
        # candidates: the best pairs that could have won (count >= min_count), winner first
        eligible = [p for p in ranked[:n_candidates] if pair_counts[p] >= min_count]
        cands = tuple((p, pair_counts[p], *first[p]) for p in eligible)
        steps.append(OracleStep(best, new, vocab[new], pair_counts[best], length, cands))
    return steps


def oracle_encode_chunk(ids: list[int], merges: list[tuple[int, int]], base_size: int) -> list[int]:
    """Apply the merges in rank order, each left to right over the whole chunk."""
    for rank, pair in enumerate(merges):
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                out.append(base_size + rank)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids
