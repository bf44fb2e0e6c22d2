"""A step's runners-up stay out of the trainer's heap until the next step (`PairQueue.next_best`):
asking for candidates between steps, as BoundlessBPE's word side does, changes no merge, and the
answer is the head of the next step's own candidate list."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.trainer import HF_BYTE_ORDER, BpeTrainer

BYTES = [bytes([i]) for i in range(256)]
CHUNKS = st.lists(st.tuples(st.binary(min_size=0, max_size=14).map(lambda b: bytes(x % 4 + 97 for x in b)),
                            st.integers(1, 6)), min_size=1, max_size=14)


def _trainer(chunks, hf: bool, min_count: int) -> BpeTrainer:
    return BpeTrainer([list(c) for c, _ in chunks], [w for _, w in chunks], BYTES, min_count=min_count,
                      hf_order=HF_BYTE_ORDER if hf else None)


def _record(step) -> tuple:
    return step.pair, step.id, step.count, step.length, step.candidates


@settings(max_examples=120, deadline=None, database=None)
@given(CHUNKS, st.booleans(), st.integers(1, 3), st.lists(st.integers(1, 8), min_size=1, max_size=40))
def test_candidates_between_steps_change_no_merge(chunks, hf, min_count, asks):
    alone = [_record(s) for s in _trainer(chunks, hf, min_count).steps(max_merges=40)]
    asked = _trainer(chunks, hf, min_count)
    steps = asked.steps(max_merges=40)
    got, answers = [], []
    for i in range(len(alone) + 1):
        n = asks[i % len(asks)]
        answers.append((n, asked.candidates(n), asked.candidates(n)))  # twice: the state is left as it was
        step = next(steps, None)
        if step is None:
            break
        got.append(_record(step))
    assert got == alone
    for (n, first, again), step in zip(answers, alone):
        assert first == again
        shown = min(n, len(step[4]))
        assert [c for c, _, _ in first[:shown]] == [c.count for c in step[4][:shown]]
        if not hf:  # (ties go by the pair there, and entries hold no position)
            assert [p for _, p, _ in first[:shown]] == [asked.starts[c.first_chunk] + c.first_offset
                                                        for c in step[4][:shown]]
    if len(alone) < 40:  # no pair left to merge
        assert answers[len(alone)][1] == []


@settings(max_examples=60, deadline=None, database=None)
@given(CHUNKS, st.booleans())
def test_steps_resumed_by_a_new_generator_continue_the_same_merges(chunks, hf):
    alone = [_record(s) for s in _trainer(chunks, hf, 1).steps(max_merges=30)]
    resumed = _trainer(chunks, hf, 1)
    got = [_record(s) for s in resumed.steps(max_merges=7)] + [_record(s) for s in resumed.steps(max_merges=30)]
    assert got == alone
