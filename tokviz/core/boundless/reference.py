"""A deliberately slow, obviously correct BoundlessBPE trainer: the reference the real one must match.

Byte units, no end-of-word mark. The corpus is kept as it is: every text (cut at special tokens)
a list of pretokens (`oracle_split`, independent of tokviz's splitter). Every step recounts:

- word pairs: adjacent tokens inside each distinct pretoken, weighted by how often it occurs (as
  `tokviz.core.bpe.reference.oracle_train`: ties to the pair seen first);
- superword pairs: adjacent elements of the texts that are both *joinable*: a superword, or a
  pretoken that the superword rule allows and that is one token now. Ties to the pair seen first
  in the corpus.

The word pair wins only with a strictly higher count (the paper's rule: a tie is a supermerge).
A merge is applied inside every pretoken, a supermerge along every text, each left to right.
If this and `tokviz.core.boundless.trainer` disagree, believe this.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.core.bpe.reference import oracle_split

from .runs import SuperwordRule


@dataclass(frozen=True)
class OracleStep:
    kind: str  # "merge" or "supermerge"
    pair: tuple[int, int]
    token: bytes
    count: int
    length: int  # corpus length in tokens after the step


def oracle_boundless(texts: list[str], split: str = "gpt4", *, max_steps: int, min_count: int = 2,
                     superwords: str = "letters", supermerges: bool = True) -> list[OracleStep]:
    """Train by recounting everything at every step."""
    rule = SuperwordRule(superwords)
    docs = [oracle_split(t, split) for t in texts]
    counts: dict[str, int] = {}
    for doc in docs:
        for p in doc:
            counts[p] = counts.get(p, 0) + 1
    chunks = list(counts)
    number = {c: i for i, c in enumerate(chunks)}
    seg = [list(c.encode("utf-8")) for c in chunks]  # each distinct pretoken's tokens now
    vocab = [bytes([i]) for i in range(256)]
    # an element of a text: ("p", chunk number) for a pretoken, ("s", id) for a superword
    elems = [[("p", number[p]) for p in doc] for doc in docs]

    def joinable(e) -> int | None:
        """The token of a joinable element, else None."""
        if e[0] == "s":
            return e[1]
        c = e[1]
        return seg[c][0] if len(seg[c]) == 1 and rule.allows(chunks[c]) else None

    steps: list[OracleStep] = []
    while len(steps) < max_steps:
        word: dict[tuple[int, int], int] = {}
        word_first: dict[tuple[int, int], tuple[int, int]] = {}
        for ci, ids in enumerate(seg):
            offset = 0
            for i in range(len(ids) - 1):
                pair = (ids[i], ids[i + 1])
                word[pair] = word.get(pair, 0) + counts[chunks[ci]]
                word_first.setdefault(pair, (ci, offset))
                offset += len(vocab[ids[i]])
        sup: dict[tuple[int, int], int] = {}
        sup_first: dict[tuple[int, int], tuple[int, int]] = {}
        if supermerges:
            for di, doc in enumerate(elems):
                for i in range(len(doc) - 1):
                    a, b = joinable(doc[i]), joinable(doc[i + 1])
                    if a is not None and b is not None:
                        sup[(a, b)] = sup.get((a, b), 0) + 1
                        sup_first.setdefault((a, b), (di, i))
        best_w = min(word, key=lambda p: (-word[p], word_first[p]), default=None)
        best_s = min(sup, key=lambda p: (-sup[p], sup_first[p]), default=None)
        wc = word[best_w] if best_w is not None and word[best_w] >= min_count else 0
        sc = sup[best_s] if best_s is not None and sup[best_s] >= min_count else 0
        if not wc and not sc:
            break
        new = len(vocab)
        if wc > sc:
            vocab.append(vocab[best_w[0]] + vocab[best_w[1]])
            for ci, ids in enumerate(seg):
                seg[ci] = _merge_left_to_right(ids, best_w, new)
            kind, pair, count = "merge", best_w, wc
        else:
            vocab.append(vocab[best_s[0]] + vocab[best_s[1]])
            for di, doc in enumerate(elems):
                out, i = [], 0
                while i < len(doc):
                    if i + 1 < len(doc) and (joinable(doc[i]), joinable(doc[i + 1])) == best_s:
                        out.append(("s", new))
                        i += 2
                    else:
                        out.append(doc[i])
                        i += 1
                elems[di] = out
            kind, pair, count = "supermerge", best_s, sc
        length = sum(1 if e[0] == "s" else len(seg[e[1]]) for doc in elems for e in doc)
        steps.append(OracleStep(kind, pair, vocab[new], count, length))
    return steps


def _merge_left_to_right(ids: list[int], pair: tuple[int, int], new: int) -> list[int]:
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
