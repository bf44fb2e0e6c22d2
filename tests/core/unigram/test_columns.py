"""The column layout's reductions against ``reduceat`` (the way the lattices reduced before),
bit for bit: maximum, log-sum-exp and the first edge reaching the maximum, on random batches of
positions and nodes, with nodes of 1 to 20 edges (more than 8 takes the ``reduceat`` path)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.unigram.columns import Columns, row_argmax_first, row_logsumexp, row_max


def oracle(v: np.ndarray, sizes: np.ndarray):
    """(max, log-sum-exp, index of the first maximum) of consecutive groups, with ``reduceat``."""
    rel = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    m = np.maximum.reduceat(v, rel)
    first = np.minimum.reduceat(np.where(v == np.repeat(m, sizes), np.arange(len(v)), len(v)), rel)
    w = v - np.repeat(m, sizes)
    np.exp(w, out=w)
    s = np.add.reduceat(w, rel)
    return m, np.log(s) + m, first


batches = st.lists(  # positions, each a list of nodes, each a list of edge values
    st.lists(st.lists(st.sampled_from([0.0, -1.5, -2.0, -3.25, -40.0]) | st.floats(-50, 0), min_size=1, max_size=20),
             min_size=1, max_size=6),
    min_size=1, max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(batches)
def test_column_reductions_equal_reduceat_bit_for_bit(batch):
    values, nodes, positions, sizes = [], [], [], []
    node = 0
    for t, rows in enumerate(batch):
        for edges in rows:
            values += edges
            nodes += [node] * len(edges)
            positions += [t] * len(edges)
            sizes.append(len(edges))
            node += 1
    values, sizes = np.array(values), np.array(sizes)
    m_ref, lse_ref, first_ref = oracle(values, sizes)
    cols = Columns(np.array(nodes), np.array(positions))
    assert sorted(cols.order.tolist()) == list(range(len(values)))
    assert [s.position for s in cols.steps] == list(range(len(batch)))
    for step in cols.steps:
        ids = cols.order[step.lo:step.hi]
        v = values[ids]
        rows = step.nodes
        assert np.array_equal(row_max(v.copy(), step), m_ref[rows])
        m, first = row_argmax_first(v.copy(), step, ids)
        assert np.array_equal(m, m_ref[rows]) and np.array_equal(first, first_ref[rows])
        assert np.array_equal(row_logsumexp(v.copy(), step), lse_ref[rows])  # bits, not approx


def test_columns_worked_example():
    """Nodes 0 (edges a, b, c) and 1 (edge d) at one position: columns [a, d] [b] [c]."""
    cols = Columns(np.array([0, 0, 0, 1]), np.array([1, 1, 1, 1]))
    (step,) = cols.steps
    assert cols.order.tolist() == [0, 3, 1, 2]
    assert step.cols == ((0, 2), (2, 3), (3, 4)) and step.nodes.tolist() == [0, 1]
    v = np.log(np.array([1.0, 4.0, 2.0, 3.0]))  # a, d, b, c in column layout
    assert np.allclose(np.exp(row_logsumexp(v, step)), [6.0, 4.0])


def test_empty_columns():
    cols = Columns(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert cols.steps == [] and len(cols.order) == 0
