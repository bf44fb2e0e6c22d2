"""Token palettes: stable colours, neighbours differ, contrast, light/dark/high-contrast variants."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokviz.core.display.palette import (
    PALETTE_LABELS,
    alternate_index,
    assign_colors,
    color_index,
    contrast_ratio,
    mix,
    token_colors,
    token_palette,
)

VARIANTS = [(k, d) for k in PALETTE_LABELS for d in (False, True)]


def test_contrast_ratio_known_values():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert contrast_ratio("#ffffff", "#767676") == pytest.approx(4.54, abs=0.01)  # WCAG's AA grey
    assert mix("#000000", "#ffffff", 0.5) == "#808080"


@pytest.mark.parametrize(("key", "dark"), VARIANTS)
def test_text_contrast_on_every_background(key, dark):
    pal = token_palette(key, dark=dark)
    need = 7.0 if key == "high-contrast" else 4.5
    for bg in pal.backgrounds:
        assert contrast_ratio(pal.text, bg) >= need, (key, dark, bg)
    assert contrast_ratio(pal.special_text, pal.special_bg) >= 4.5
    assert contrast_ratio(pal.unknown_text, pal.unknown_bg) >= 4.5
    assert len(set(pal.backgrounds)) == pal.size >= 6


def test_variants_differ_and_unknown_palette_is_a_clear_error():
    assert token_palette("okabe-ito").backgrounds != token_palette("okabe-ito", dark=True).backgrounds
    assert token_palette("high-contrast").border is not None
    with pytest.raises(ValueError, match="choose one of"):
        token_palette("rainbow")


@given(st.lists(st.integers(0, 100_000), max_size=200), st.sampled_from([6, 8, 9]))
def test_neighbours_always_differ(ids, n):
    slots = assign_colors(ids, n)
    assert len(slots) == len(ids)
    assert all(0 <= s < n for s in slots)
    assert all(a != b for a, b in zip(slots, slots[1:]))
    for t, s in zip(ids, slots):
        assert s in (color_index(t, n), alternate_index(t, n))


def test_colour_is_stable_per_id():
    pal = token_palette()
    a = token_colors([10, 300, 11, 300], pal)
    b = token_colors([10, 300, 11, 300], pal)
    assert a == b
    # the same id keeps its colour in other texts when its neighbour allows
    assert token_colors([300], pal)[0] == pal.color_of(300) == a[1]
    # the same token repeated alternates between its two colours, never the same twice
    rep = token_colors([42] * 6, pal)
    assert rep[0] != rep[1] and rep[0] == rep[2]


def test_stable_across_processes():
    code = "from tokviz.core.display.palette import color_index; print([color_index(i, 8) for i in range(20)])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str([color_index(i, 8) for i in range(20)])


def test_token_view_core_modules_do_not_load_qt():
    code = ("import sys; import tokviz.core.display.palette, tokviz.core.display.tokens, tokviz.core.display.diagnostics; "
            "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
