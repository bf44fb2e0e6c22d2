"""The small print of the token view (characters under byte groups, ids under tokens) stays
readable in the normal window: at least `MIN_SMALL_PRINT_PX` at the default font, never larger
than the tokens themselves, and larger with the presenter's small-print floor."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontInfo
from PySide6.QtWidgets import QApplication

from tokviz.panels.base import SMALL_PRINT_PROPERTY
from tokviz.panels.token_view.flow_view import MIN_SMALL_PRINT_PX, TokenFlowView


@pytest.fixture
def view(qtbot):
    v = TokenFlowView()
    qtbot.addWidget(v)
    return v


def _px(font: QFont) -> int:
    return QFontInfo(font).pixelSize()


def test_byte_group_captions_are_readable_at_the_default_font(view):
    assert MIN_SMALL_PRINT_PX >= 11
    token_px = _px(view.font())
    assert token_px >= MIN_SMALL_PRINT_PX  # the default font is not smaller than the floor itself
    assert MIN_SMALL_PRINT_PX <= _px(view.caption_font()) <= token_px


@pytest.mark.parametrize("pixels", [8, 30])
def test_captions_never_outgrow_the_tokens_and_scale_with_them(view, pixels):
    font = QFont(view.font())
    font.setPixelSize(pixels)
    view.setFont(font)
    token_px = _px(view.font())
    caption = _px(view.caption_font())
    assert caption <= token_px
    assert caption == (token_px if pixels < MIN_SMALL_PRINT_PX else max(MIN_SMALL_PRINT_PX, round(0.72 * token_px)))


def test_the_presenter_floor_still_wins(view):
    app = QApplication.instance()
    app.setProperty(SMALL_PRINT_PROPERTY, 24)
    try:
        view.refresh_fonts()
        assert _px(view.caption_font()) >= 24
    finally:
        app.setProperty(SMALL_PRINT_PROPERTY, None)
        view.refresh_fonts()
    assert _px(view.caption_font()) < 24
