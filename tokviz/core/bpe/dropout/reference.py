"""The readable BPE-dropout loop: slow, obviously HF's ``merge_all``, the one the fast loops
(`pair_rank`, `byte_rank`) must equal draw for draw.

Parts live at the position of their first symbol; a part joined into its left neighbour leaves
``None`` behind. The queue holds ``(rank, position)`` of candidate joins.

    >>> import random
    >>> merges = {(97, 98): 256, (256, 99): 257}  # minbpe's {pair: new id}; the lower id joins first
    >>> dropout_encode_reference([97, 98, 99, 97, 98], merges, 0.0, random.Random(0))
    [257, 256]
    >>> dropout_encode_reference([97, 98, 99], merges, 1.0, random.Random(0))
    [97, 98, 99]
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Hashable
from typing import TypeVar

Part = TypeVar("Part", bound=Hashable)


def dropout_merge_reference(parts: list[Part], rank_of: Callable[[Part, Part], int | None],
                            join: Callable[[Part, Part], Part], p: float, rng: random.Random) -> list[Part]:
    """The parts left after joining neighbours by `rank_of` (lowest first, None: never), each
    candidate skipped with probability `p` until the next one that is not skipped."""
    slots: list[Part | None] = list(parts)

    def next_part(i: int) -> int | None:
        j = i + 1
        while j < len(slots) and slots[j] is None:
            j += 1
        return j if j < len(slots) else None

    def prev_part(i: int) -> int | None:
        j = i - 1
        while j >= 0 and slots[j] is None:
            j -= 1
        return j if j >= 0 else None

    def queue_pair(queue: list, i: int | None) -> None:
        j = None if i is None else next_part(i)
        if j is not None:
            rank = rank_of(slots[i], slots[j])  # type: ignore[arg-type,index]
            if rank is not None:
                heapq.heappush(queue, (rank, i))

    queue: list[tuple[int, int]] = []
    for i in range(len(slots) - 1):
        queue_pair(queue, i)
    skipped: list[tuple[int, int]] = []
    while queue:
        rank, i = heapq.heappop(queue)
        if rng.random() < p:
            skipped.append((rank, i))  # dropped for now: back after the next candidate kept
            continue
        for entry in skipped:
            heapq.heappush(queue, entry)
        skipped.clear()
        j = next_part(i) if slots[i] is not None else None
        if j is None or rank_of(slots[i], slots[j]) != rank:  # type: ignore[arg-type]
            continue  # stale: the part was joined away, or its pair changed
        slots[i] = join(slots[i], slots[j])  # type: ignore[arg-type]
        slots[j] = None
        queue_pair(queue, prev_part(i))
        queue_pair(queue, i)
    return [s for s in slots if s is not None]


def dropout_encode_reference(ids: list[int], merges: dict[tuple[int, int], int], p: float,
                             rng: random.Random) -> list[int]:
    """minbpe's merges (``{pair: new id}``, lower new ids first) with dropout `p`."""
    return dropout_merge_reference(list(ids), lambda a, b: merges.get((a, b)), lambda a, b: merges[(a, b)], p, rng)


def dropout_parts_reference(piece: bytes, ranks: dict[bytes, int], p: float, rng: random.Random,
                            limit: int | None = None) -> list[bytes]:
    """tiktoken's rule with dropout: neighbours whose joined bytes are a token of rank < `limit`."""
    def rank_of(a: bytes, b: bytes) -> int | None:
        r = ranks.get(a + b)
        return None if r is None or (limit is not None and r >= limit) else r

    return dropout_merge_reference([bytes([b]) for b in piece], rank_of, bytes.__add__, p, rng)
