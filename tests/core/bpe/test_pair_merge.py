"""`pair_merge`: the one pair-rank loop every merge-list tokenizer uses equals a slow, obvious loop,
on short words (the list of ranks) and long ones (the heap), with part positions and traces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.bpe.pair_merge import INF_RANK, LONG_WORD, PairMerges, pair_key
from tokviz.core.bpe.reference import oracle_encode_chunk

HYPOTHESIS = settings(max_examples=300, deadline=None, database=None)
LENGTHS = {"short": (0, LONG_WORD), "long": (LONG_WORD + 1, 4 * LONG_WORD)}  # the heap past LONG_WORD


def naive_merge(ids, rank_of, new_ids, limit):
    """Scan every pair, join the lowest rank below `limit` (leftmost of equals), repeat. Returns
    the ids, the first symbol of each part, and (rank, pair, new id, ids after) of each join."""
    ids, firsts, steps = list(ids), list(range(len(ids))), []
    while True:
        best = None
        for i in range(len(ids) - 1):
            r = rank_of.get(pair_key(ids[i], ids[i + 1]))
            if r is not None and r < limit and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return ids, firsts, steps
        r, i = best
        pair = (ids[i], ids[i + 1])
        ids[i : i + 2] = [new_ids[r]]
        del firsts[i + 1]
        steps.append((r, pair, new_ids[r], tuple(ids)))


@st.composite
def trained_case(draw, length):
    """A merge list as training makes it (each merge joins ids that exist before it; a repeated
    pair keeps its first rank, as `BpeTokenizer`), base ids and a step limit."""
    base = draw(st.integers(2, 4))
    merges = []
    for r in range(draw(st.integers(0, 14))):
        merges.append((draw(st.integers(0, base + r - 1)), draw(st.integers(0, base + r - 1))))
    ids = draw(st.lists(st.integers(0, base - 1), min_size=LENGTHS[length][0], max_size=LENGTHS[length][1]))
    return base, merges, ids, draw(st.integers(0, len(merges)))


@st.composite
def loaded_case(draw, length):
    """Any merge list, as a loaded file may hold: new ids anywhere (a merge may even make an id a
    lower rank joins again), repeated pairs keeping their last rank (as Hugging Face)."""
    k = draw(st.integers(2, 5))
    pairs = draw(st.lists(st.tuples(st.integers(0, k), st.integers(0, k)), max_size=12))
    new_ids = [draw(st.integers(0, k)) for _ in pairs]
    rank_of = {pair_key(a, b): r for r, (a, b) in enumerate(pairs)}
    ids = draw(st.lists(st.integers(0, k), min_size=LENGTHS[length][0], max_size=LENGTHS[length][1]))
    limit = draw(st.one_of(st.just(INF_RANK), st.integers(0, len(pairs))))
    return rank_of, new_ids, ids, limit


def check_against_naive(rank_of, new_ids, ids, limit):
    merges = PairMerges(rank_of, new_ids)
    want, want_firsts, want_steps = naive_merge(ids, rank_of, new_ids, limit)
    firsts = list(range(len(ids)))
    assert merges.merge(list(ids), limit, firsts=firsts) == want
    assert firsts == want_firsts
    assert merges.merge(list(ids), limit, ranks=merges.pair_ranks(ids)) == want
    assert merges.steps(ids, limit) == want_steps


@HYPOTHESIS
@given(st.sampled_from(sorted(LENGTHS)).flatmap(trained_case))
def test_trained_merge_lists_equal_applying_each_merge_everywhere_in_rank_order(case):
    base, merges, ids, limit = case
    rank_of: dict[int, int] = {}
    for r, (a, b) in enumerate(merges):
        rank_of.setdefault(pair_key(a, b), r)
    new_ids = range(base, base + len(merges))
    assert PairMerges(rank_of, new_ids).merge(list(ids), limit) == oracle_encode_chunk(ids, merges[:limit], base)
    check_against_naive(rank_of, new_ids, ids, limit)


@HYPOTHESIS
@given(st.sampled_from(sorted(LENGTHS)).flatmap(loaded_case))
def test_any_merge_list_joins_the_lowest_rank_leftmost_first(case):
    check_against_naive(*case)


def test_known_answer_and_both_loops():
    """minbpe's example: "aaabdaaabac" after merges aa, aa+a... -> [258, 100, 258, 97, 99]; the
    same word repeated past LONG_WORD symbols (the heap loop) gives the same ids repeated."""
    a, b, c, d = map(ord, "abcd")
    merges = PairMerges({pair_key(a, a): 0, pair_key(256, a): 1, pair_key(257, b): 2}, range(256, 259))
    word = list(b"aaabdaaabac")
    assert merges.merge(list(word), INF_RANK) == [258, d, 258, a, c]
    assert merges.merge(list(word), 1) == [256, a, b, d, 256, a, b, a, c]
    long = word * (LONG_WORD // len(word) + 2)
    assert len(long) > LONG_WORD
    assert merges.merge(list(long), INF_RANK) == [258, d, 258, a, c] * (LONG_WORD // len(word) + 2)
