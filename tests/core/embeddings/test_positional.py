"""Positional encodings: known values, RoPE's relative property, ALiBi slopes, similarity, text."""

from __future__ import annotations

import csv
import doctest
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import qt_modules_loaded
from tokviz.core import SettingsError
from tokviz.core.embeddings import positional as P
from tokviz.core.embeddings import positional_params as positional_base
from tokviz.core.embeddings import positional_text as positional_export
from tokviz.core.embeddings import rope as positional_rope

HYPOTHESIS = settings(max_examples=60, deadline=None, database=None)


@pytest.mark.parametrize("module", [P, positional_base, positional_rope, positional_export])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# -- sinusoidal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3, 8, 64, 1023])
def test_sinusoidal_position_zero_is_sin0_cos0(d):
    pe = P.sinusoidal(4, d)
    assert pe.shape == (4, d) and pe.dtype == np.float32
    assert np.all(pe[0, 0::2] == 0.0)  # sin(0)
    assert np.all(pe[0, 1::2] == 1.0)  # cos(0)


def test_sinusoidal_known_points():
    pe = P.sinusoidal(10, 64, 10000.0, dtype=np.float64)
    assert pe[1, 0] == pytest.approx(math.sin(1.0), abs=1e-12)  # frequency 1 at column 0
    assert pe[1, 1] == pytest.approx(math.cos(1.0), abs=1e-12)
    # PE(5, 2*3) = sin(5 / 10000^(6/64)); 10000^(6/64) = 10^(0.375) = 2.3713737...
    assert pe[5, 6] == pytest.approx(math.sin(5 / 10 ** 0.375), abs=1e-12)
    assert pe[5, 6] == pytest.approx(0.858896, abs=1e-6)
    assert pe[7, 63] == pytest.approx(math.cos(7 / 10000 ** (62 / 64)), abs=1e-12)
    small_base = P.sinusoidal(3, 4, 100.0, dtype=np.float64)
    assert small_base[2].tolist() == pytest.approx([math.sin(2), math.cos(2), math.sin(0.2), math.cos(0.2)])


def test_sinusoidal_float32_accurate_at_large_positions():
    pos = np.array([0, 1, 4095, 8191])
    pe = P.sinusoidal(pos, 1024)
    i = np.arange(512)
    angles = pos[:, None] / 10000.0 ** (2 * i / 1024)
    assert np.abs(pe[:, 0::2] - np.sin(angles)).max() < 5e-7
    assert np.abs(pe[:, 1::2] - np.cos(angles)).max() < 5e-7
    full = P.sinusoidal(8192, 1024)
    assert full.shape == (8192, 1024)
    assert np.array_equal(full[pos], pe)  # rows do not depend on which other rows are computed


def test_sinusoidal_odd_dimension_last_column_is_a_sine():
    pe = P.sinusoidal(6, 5, 10000.0, dtype=np.float64)
    expected = [math.sin(p / 10000 ** (4 / 5)) for p in range(6)]
    assert pe[:, 4].tolist() == pytest.approx(expected, abs=1e-12)
    assert pe[:, :4] == pytest.approx(P.sinusoidal(6, 5, dtype=np.float64)[:, :4])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: P.sinusoidal(4, 1), "model dimension d must be between 2 and 2048, got 1"),
        (lambda: P.sinusoidal(4, 2049), "between 2 and 2048, got 2049"),
        (lambda: P.sinusoidal(4, True), "model dimension"),
        (lambda: P.sinusoidal(0, 8), "number of positions must be between 1 and 8192, got 0"),
        (lambda: P.sinusoidal(8193, 8), "between 1 and 8192, got 8193"),
        (lambda: P.sinusoidal(4, 8, 1.0), "base must be a finite number greater than 1"),
        (lambda: P.sinusoidal(4, 8, float("nan")), "base must be"),
        (lambda: P.sinusoidal(np.array([0, 8192]), 8), "positions must lie in 0..8191"),
        (lambda: P.sinusoidal(np.array([0.5]), 8), "whole numbers"),
        (lambda: P.learned_random(4, 8, seed=-1), "seed must be a whole number >= 0, got -1"),
        (lambda: P.learned_random(4, 8, scale=0), "scale"),
        (lambda: P.alibi_bias(4, n_heads=0), "number of heads must be between 1 and 1024"),
        (lambda: P.alibi_bias(4, n_heads=8, head=8), "head must be between 0 and 7"),
        (lambda: P.alibi_bias(4, slope=-1.0), "slope must be a number >= 0"),
        (lambda: P.positional_matrix("fourier", P.PositionalParams()), "unknown positional encoding 'fourier'"),
        (lambda: P.similarity(np.ones((2, 2)), "euclid"), "unknown similarity 'euclid'; choose one of dot, cosine"),
        (lambda: P.display_positions(10, 0), "max_rows"),
    ],
)
def test_invalid_parameters_say_what_to_choose(call, message):
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        call()


def test_params_validate_all_fields():
    assert P.PositionalParams(d=2048, n_pos=8192, base=2.0, seed=3).validate().d == 2048
    with pytest.raises(SettingsError, match="head must be between 0 and 3"):
        P.PositionalParams(n_heads=4, head=4).validate()


# -- learned ------------------------------------------------------------------------------------


def test_learned_random_is_seeded_and_keeps_rows_when_growing():
    a = P.learned_random(100, 16, seed=5)
    assert a.shape == (100, 16) and a.dtype == np.float32
    assert np.array_equal(a, P.learned_random(100, 16, seed=5))
    assert not np.array_equal(a, P.learned_random(100, 16, seed=6))
    assert np.array_equal(P.learned_random(10, 16, seed=5), a[:10])
    assert np.array_equal(P.learned_random(np.array([3, 7]), 16, seed=5), a[[3, 7]])
    big = P.learned_random(2000, 64, seed=0, scale=0.02)
    assert big.std() == pytest.approx(0.02, rel=0.02)
    assert abs(big.mean()) < 0.001


def test_learned_random_drawn_in_parallel_blocks_matches_the_serial_draw():
    n, d = 4100, 256  # over PARALLEL_MIN_ENTRIES: drawn on threads, 17 blocks, the last one short
    assert n * d >= P.PARALLEL_MIN_ENTRIES and n % P.LEARNED_BLOCK_ROWS
    big = P.learned_random(n, d, seed=9, scale=0.5)
    assert np.array_equal(big[:300], P.learned_random(300, d, seed=9, scale=0.5))  # serial, crosses a block
    assert np.array_equal(big[[4099, 17]], P.learned_random(np.array([4099, 17]), d, seed=9, scale=0.5))
    blocks = big.reshape(-1, d)[: (n // P.LEARNED_BLOCK_ROWS) * P.LEARNED_BLOCK_ROWS]
    firsts = blocks[:: P.LEARNED_BLOCK_ROWS]
    assert len({row.tobytes() for row in firsts}) == len(firsts)  # each block has its own stream
    assert big.std() == pytest.approx(0.5, rel=0.01)


# -- RoPE ---------------------------------------------------------------------------------------


def test_rope_angles_known_values_and_wrap():
    angles = P.rope_angles(4, 8, 10000.0, dtype=np.float64)
    assert angles.shape == (4, 4)
    assert angles[3].tolist() == pytest.approx([3 * 10000 ** (-2 * i / 8) for i in range(4)])
    assert angles[3, 0] == 3.0
    raw = P.rope_angles(8192, 64, dtype=np.float64)
    wrapped = P.rope_angles(8192, 64, wrap=True, dtype=np.float64)
    assert np.abs(wrapped).max() <= math.pi + 1e-12
    assert np.allclose(np.cos(raw), np.cos(wrapped), atol=1e-9)
    assert np.allclose(np.sin(raw), np.sin(wrapped), atol=1e-9)
    assert wrapped[8191, 0] == pytest.approx(8191 - 2 * math.pi * round(8191 / (2 * math.pi)))


def test_rope_rotate_known_rotation_and_layouts():
    e0 = np.array([1.0, 0.0, 0.0, 0.0])
    inter = P.rope_rotate(e0, 1, 10000.0)
    assert inter.tolist() == pytest.approx([math.cos(1), math.sin(1), 0, 0])  # pair (0, 1)
    half = P.rope_rotate(e0, 1, 10000.0, layout="half")
    assert half.tolist() == pytest.approx([math.cos(1), 0, math.sin(1), 0])  # pair (0, 2)
    odd = P.rope_rotate(np.array([0.0, 0.0, 0.0, 0.0, 2.5]), 123, 10000.0)
    assert odd.tolist() == [0.0, 0.0, 0.0, 0.0, 2.5]  # the unpaired last dimension stays
    x = np.random.default_rng(0).standard_normal((50, 16))
    rotated = P.rope_rotate(x, np.arange(50), 500.0)
    assert np.allclose(np.linalg.norm(rotated, axis=1), np.linalg.norm(x, axis=1))  # rotations keep length
    assert np.allclose(rotated[0], x[0])  # position 0: identity
    with pytest.raises(SettingsError, match="unknown RoPE layout 'spiral'"):
        P.rope_rotate(e0, 1, layout="spiral")
    with pytest.raises(SettingsError, match="3 vectors need 3 positions"):
        P.rope_rotate(np.ones((3, 4)), np.arange(2))


@HYPOTHESIS
@given(
    seed=st.integers(0, 2**32 - 1),
    d=st.sampled_from([2, 3, 8, 17, 64]),
    m=st.integers(0, 4000),
    n=st.integers(0, 4000),
    shift=st.integers(-4000, 4000),
    base=st.sampled_from([10000.0, 500.0, 1e6]),
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_rope_score_depends_only_on_distance(seed, d, m, n, shift, base, layout):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    score = P.rope_score(q, k, m, n, base, layout=layout)
    shifted = P.rope_score(q, k, m + shift, n + shift, base, layout=layout)
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert shifted == pytest.approx(score, abs=1e-9 * scale)
    dist, by_distance = P.rope_score_by_distance(q, k, 4000, base, layout=layout)
    assert dist[4000 + (n - m)] == n - m
    assert by_distance[4000 + (n - m)] == pytest.approx(score, abs=1e-9 * scale)


def test_rope_score_matrix_is_constant_along_diagonals():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal(32), rng.standard_normal(32)
    explicit = P.rope_score_matrix(q, k, 200, 1000.0, explicit=True)
    assert P.shift_invariance_error(explicit) < 1e-11
    assert np.allclose(P.rope_score_matrix(q, k, 200, 1000.0), explicit, atol=1e-10)
    assert np.abs(explicit - explicit.T).max() > 0.1  # q != k: not symmetric, yet shift-invariant
    pos = np.array([0, 3, 4, 10, 90])  # uneven positions take the gather path
    assert np.allclose(P.rope_score_matrix(q, k, pos, 1000.0), P.rope_score_matrix(q, k, pos, 1000.0, explicit=True))
    learned = P.similarity(P.learned_random(200, 32, seed=0), "dot")
    assert P.shift_invariance_error(learned) > 1e-3  # a random table has no such structure


def test_rope_long_term_decay_with_ones():
    q, k = P.rope_demo_vectors(128)
    dist, s = P.rope_score_by_distance(q, k, 4000)
    assert s[4000] == pytest.approx(128.0)  # distance 0: |q|^2
    assert np.allclose(s, s[::-1])  # q = k: symmetric in the distance
    band = [np.abs(s[4000 + a : 4000 + b]).mean() for a, b in [(1, 11), (500, 1000), (2000, 4001)]]
    assert band[0] > 3 * band[1] and band[1] > 2 * band[2]  # far-apart tokens interact less
    rq, rk = P.rope_demo_vectors(8, seed=3)
    assert rq.shape == (8,) and not np.allclose(rq, rk)


def test_rope_distance_limits():
    with pytest.raises(SettingsError, match="max_distance must be between 0 and 8191"):
        P.rope_score_by_distance(np.ones(4), np.ones(4), 8192)
    with pytest.raises(SettingsError, match="same length"):
        P.rope_score(np.ones(4), np.ones(6), 0, 1)


# -- ALiBi --------------------------------------------------------------------------------------


def test_alibi_slopes_for_eight_heads_are_half_to_1_over_256():
    assert P.alibi_slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    assert P.alibi_slopes(16).tolist() == pytest.approx([2 ** (-0.5 * i) for i in range(1, 17)])
    # 12 heads: the 8-head slopes, then every other 16-head slope (2^-0.5, 2^-1.5, ...)
    expected = [2 ** -i for i in range(1, 9)] + [2 ** (-0.5 * i) for i in (1, 3, 5, 7)]
    assert P.alibi_slopes(12).tolist() == pytest.approx(expected)
    assert P.alibi_slopes(1).tolist() == [2 ** -8]


def test_alibi_bias_values():
    bias = P.alibi_bias(6, n_heads=8, head=2)  # slope 1/8
    i, j = np.indices((6, 6))
    assert np.array_equal(bias, (-np.abs(i - j) / 8).astype(np.float32))
    assert np.all(np.diag(bias) == 0) and np.array_equal(bias, bias.T)
    causal = P.alibi_bias(4, slope=1.0, causal=True)
    assert np.isnan(causal[0, 1]) and np.isnan(causal[2, 3])
    assert causal[3, 0] == -3.0 and causal[1, 1] == 0.0
    assert np.count_nonzero(np.isnan(causal)) == 6
    sub = P.alibi_bias(np.array([0, 10, 20]), slope=0.5)
    assert sub.tolist() == [[0, -5, -10], [-5, 0, -5], [-10, -5, 0]]


# -- similarity ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dot", "cosine"])
def test_similarity_symmetric_with_unit_cosine_diagonal(kind):
    x = np.random.default_rng(2).standard_normal((40, 24)) * np.linspace(0.1, 5, 40)[:, None]
    x[7] = 0.0  # a zero row
    s = P.similarity(x, kind)
    assert s.shape == (40, 40) and s.dtype == np.float32
    assert np.array_equal(s, s.T)
    if kind == "cosine":
        assert np.all(np.diag(s) == 1.0)
        assert s.min() >= -1.0 and s.max() <= 1.0
        assert np.all(s[7, np.arange(40) != 7] == 0.0)
        unit = x[[0, 1]] / np.linalg.norm(x[[0, 1]], axis=1)[:, None]
        assert s[0, 1] == pytest.approx(unit[0] @ unit[1], abs=1e-6)
    else:
        assert np.allclose(s, x @ x.T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("d", [16, 15])
@pytest.mark.parametrize("kind", ["dot", "cosine"])
@pytest.mark.parametrize("positions", [300, np.arange(0, 3000, 7), np.array([0, 2, 3, 50, 51, 4000])])
def test_sinusoidal_similarity_matches_brute_force(d, kind, positions):
    fast = P.sinusoidal_similarity(positions, d, 10000.0, kind)
    slow = P.similarity(P.sinusoidal(positions, d, dtype=np.float64), kind)
    assert fast.dtype == np.float32
    assert np.abs(fast - slow).max() < 2e-5 * (d if kind == "dot" else 1)
    if kind == "cosine":
        assert np.all(np.diag(fast) == 1.0) and np.array_equal(fast, fast.T)


def test_sinusoidal_dot_products_depend_only_on_distance():
    s = P.sinusoidal_similarity(512, 64, kind="dot")
    assert P.shift_invariance_error(s) == 0.0  # laid out along diagonals: exactly Toeplitz
    brute = P.similarity(P.sinusoidal(512, 64, dtype=np.float64), "dot")
    assert P.shift_invariance_error(brute) < 1e-4  # the brute force agrees up to rounding
    assert s[0, 0] == pytest.approx(32.0)  # d/2 pairs of sin^2 + cos^2


def test_positional_matrix_and_similarity_dispatch():
    p = P.PositionalParams(d=8, n_pos=10, n_heads=4, head=1)
    assert P.positional_matrix("sinusoidal", p).shape == (10, 8)
    assert np.array_equal(P.positional_matrix("learned", p), P.learned_random(10, 8, 0, 0.02))
    assert P.positional_matrix("rope", p).shape == (10, 4)
    assert np.array_equal(P.positional_matrix("alibi", p), P.alibi_bias(10, slope=2 ** -4))
    sim = P.positional_similarity("learned", p, "cosine", positions=np.array([1, 4]))
    assert sim.shape == (2, 2) and sim[0, 0] == 1.0
    with pytest.raises(SettingsError, match="rope adds no vector .* rope_score_matrix"):
        P.positional_similarity("rope", p)


def test_display_positions_even_steps():
    assert P.display_positions(8192, 2048).tolist() == list(range(0, 8192, 4))
    assert P.display_positions(100, 2048).tolist() == list(range(100))
    assert len(P.display_positions(8191, 1000)) <= 1000


# -- filling recycled memory (out=) -------------------------------------------------------------


@pytest.mark.parametrize("make, cols", [
    (lambda out=None: P.sinusoidal(300, 7, 500.0, out=out), 7),
    (lambda out=None: P.learned_random(300, 9, seed=4, out=out), 9),
    (lambda out=None: P.rope_angles(300, 10, 500.0, wrap=True, out=out), 5),
])
def test_out_buffer_gets_the_same_values(make, cols):
    out = np.full((300, cols), np.nan, dtype=np.float32)
    got = make(out)
    assert got is out and np.array_equal(out, make())
    with pytest.raises(SettingsError, match="out must be a C-contiguous float32 array of shape"):
        make(np.empty((300, cols + 1), dtype=np.float32))
    with pytest.raises(SettingsError, match="C-contiguous"):
        make(np.empty((cols, 300), dtype=np.float32).T)


def test_learned_out_needs_all_positions():
    with pytest.raises(SettingsError, match="positions 0..n_pos-1"):
        P.learned_random(np.array([0, 5]), 4, out=np.empty((2, 4), dtype=np.float32))


# -- hover text and CSV -------------------------------------------------------------------------


def test_formula_text_fills_in_the_numbers():
    p = P.PositionalParams(d=64, base=10000.0, seed=4, n_heads=8)
    assert P.formula_text("sinusoidal", 1, 0, p) == "PE(1, 2·0) = sin(1 / 10000^(0/64)) = 0.8415"
    assert P.formula_text("sinusoidal", 0, 7, p) == "PE(0, 2·3+1) = cos(0 / 10000^(6/64)) = 1.0000"
    table = P.learned_random(20, 64, seed=4)
    text = P.formula_text("learned", 12, 5, p)
    assert text.startswith(f"P[12, 5] = {table[12, 5]:.4f}") and "seed 4" in text
    assert P.formula_text("learned", 12, 5, p, value=0.25).startswith("P[12, 5] = 0.2500")
    assert P.formula_text("rope", 100, 0, p) == (
        "θ(100, 0) = 100 · 10000^(-0/64) = 100.0000 rad ≡ -0.5310 rad (mod 2π) (rotates dimensions 0, 1)"
    )
    assert P.formula_text("alibi", 2, 9, p, causal=True) == "bias(2, 9): masked (key 9 comes after query 2)"
    assert P.formula_text("alibi", 9, 2, P.PositionalParams(n_heads=8, head=2)) == (
        "bias(9, 2) = -m·|9 - 2| = -0.125·7 = -0.8750 (head 2 of 8, m = 0.125)"
    )
    with pytest.raises(SettingsError, match="dimension must be between 0 and 63"):
        P.formula_text("sinusoidal", 0, 64, p)
    with pytest.raises(SettingsError, match="pair must be between 0 and 31"):
        P.formula_text("rope", 0, 32, p)


@pytest.mark.parametrize("pos, dim", [(0, 0), (5, 6), (4097, 511), (8191, 1023), (333, 2)])
def test_formula_value_matches_the_matrix(pos, dim):
    p = P.PositionalParams(d=1024)
    text = P.formula_text("sinusoidal", pos, dim, p, digits=6)
    value = float(text.rsplit("= ", 1)[1])
    assert value == pytest.approx(float(P.sinusoidal(np.array([pos]), 1024)[0, dim]), abs=2e-6)


def test_csv_text_round_trips_with_awkward_labels():
    m = np.array([[0.1, -2.5, 3.0], [1e-8, np.nan, 65504.0]], dtype=np.float32)
    labels = ['a,b', 'say "hi"']
    text = P.csv_text(m, row_labels=labels, corner="token")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["token", "0", "1", "2"]
    assert [r[0] for r in rows[1:]] == labels
    back = np.array([[float(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32)
    assert np.array_equal(back, m, equal_nan=True)  # %.7g round-trips float32
    plain = P.csv_text(np.eye(2), col_labels=["x", "y"])
    assert plain == ",x,y\n0,1,0\n1,0,1\n"
    with pytest.raises(SettingsError, match="1 row labels for 2 rows"):
        P.csv_text(m, row_labels=["only one"])
    with pytest.raises(SettingsError, match="2-D matrix"):
        P.csv_text(np.ones(3))


def test_modules_load_no_qt(tmp_path):
    assert qt_modules_loaded("tokviz.core.embeddings.positional", "tokviz.core.embeddings", cwd=tmp_path) == []
