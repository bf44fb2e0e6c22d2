"""The first-run screen over a window whose lazily built panels and first layout come after it: it
stays visible and on top (a click on a card reaches the card), the sample card trains, and the cards
say what they do, readably in both themes."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from tests.qt_fixtures import drain_events
from tokviz.panels.welcome.screen import PATHS


@pytest.fixture
def first_start(make_window):
    """A first start as `tokviz` makes it: panels built after the first paint, the welcome offered."""
    return make_window(offer_welcome=True, defer_panels=True)


def _build_and_lay_out(window) -> None:
    """What happens after the first paint of a first start: the deferred panels are built, and the
    maximized window gets its workspace's layout afresh (docks re-added and raised, new tab bars)."""
    window.docks.build_pending()
    window.workspaces.arrange()
    drain_events()


def _widget_under(window, widget: QWidget, point: QPoint | None = None) -> QWidget | None:
    """The window's child a click at `point` of `widget` (its centre) would reach."""
    at = widget.mapTo(window, point if point is not None else widget.rect().center())
    return window.childAt(at)


def _is_inside(widget: QWidget | None, ancestor: QWidget) -> bool:
    while widget is not None and widget is not ancestor:
        widget = widget.parentWidget()
    return widget is ancestor


def test_it_stays_on_top_after_the_deferred_panels_and_the_first_layout(first_start):
    screen = first_start.welcome.screen
    _build_and_lay_out(first_start)
    assert all(first_start.docks.panel(pid) is not None for pid in ("compare", "chat", "embeddings"))
    assert screen.isVisible()
    siblings = [w for w in first_start.children() if isinstance(w, QWidget) and not w.isWindow()]
    above = [w for w in siblings[siblings.index(screen) + 1:]
             if w.isVisible() and w.geometry().intersects(screen.geometry())]
    assert above == []  # no dock or tab bar stacked over it
    for key in ("sample", "tokenizer", "lesson"):
        card = screen.buttons[key]
        assert _is_inside(_widget_under(first_start, card), card), key
    assert _is_inside(_widget_under(first_start, screen, QPoint(5, 5)), screen)  # the veil, too
    first_start.docks.select("compare")  # Alt+N raises a dock: still under the screen
    drain_events()
    assert screen.is_on_top()


def test_the_sample_card_trains_after_the_first_layout(first_start, qtbot):
    _build_and_lay_out(first_start)
    card = first_start.welcome.screen.buttons["sample"]
    target = _widget_under(first_start, card)  # what a click there reaches: the card, not a panel
    centre = card.mapTo(first_start, card.rect().center())
    qtbot.mouseClick(target, Qt.MouseButton.LeftButton, pos=target.mapFrom(first_start, centre))
    assert first_start.script.wait_for_training(60_000) == "finished"
    assert first_start.step_model.timeline.n_merges > 0
    qtbot.waitUntil(lambda: first_start.timeline_panel.merge_model.rowCount() > 0)
    assert not first_start.welcome.screen.isVisible()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_cards_show_their_title_and_description_readably(make_window, theme):
    window = make_window(offer_welcome=True)
    window.appearance.set_theme(theme, save=False)
    drain_events()
    for (key, title, description), card in zip(PATHS, window.welcome.screen.buttons.values(), strict=True):
        assert (card.title, card.description) == (title, description), key
        for label, text in ((card.title_label, title), (card.description_label, description)):
            assert label.text() == text and label.isVisible()
            assert card.rect().contains(label.geometry())  # inside the card, not beside it
        image = card.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
        bgr = pixels[:, : image.width() * 4].reshape(image.height(), image.width(), 4)[:, :, :3].astype(float)
        luminance = bgr @ np.array([0.0722, 0.7152, 0.2126])  # (h, w): BGR -> Rec. 709 luma
        background = np.median(luminance)
        text = np.abs(luminance - background) > 96  # pixels that stand out from the card's colour
        assert text.mean() > 0.005, f"{key}: the card is one flat colour in the {theme} theme"
        rows = np.flatnonzero(text.any(axis=1))  # the title and the description: two bands of ink
        assert rows[-1] - rows[0] > 2 * card.fontMetrics().height(), key
