"""The records a BPE training run yields: one `MergeStep` per merge, with the `Candidate` pairs it beat.

Frozen and shared: a runner-up that did not change between two steps is the same object in both
(the trainer reuses it, and the model writer writes it once). What this leaves out: the trainer
(`tokviz.core.bpe.trainer`) and the file format (`tokviz.core.bpe.model_file`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pair that could have been merged at a step, with its count and first occurrence."""

    pair: tuple[int, int]
    count: int
    first_chunk: int  # index of the (deduplicated, first-appearance ordered) chunk
    first_offset: int  # position of the pair's left symbol in that chunk, in base symbols


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge of the training timeline. Step k of the timeline = the first k merges."""

    rank: int  # 0-based merge index
    pair: tuple[int, int]  # (left id, right id)
    id: int  # id of the new token
    token: bytes  # bytes of the new token (UTF-8 for character units)
    count: int  # weighted count of the pair when it won
    length: int  # corpus length in tokens (weighted) after the merge
    candidates: tuple[Candidate, ...] = ()  # best pairs at this step, winner first
