"""`Presenter`: presenter mode for projectors (F5 toggles, Esc leaves).

Full screen with one or two panels (a running lesson's ``panel_ids``, else the panel in
front of the central tab group), each laid out for the back row (``Panel.set_presenting``) and
two sharing the width, fonts scaled (``AppSettings.presenter_scale()``, 1.5x-3x, lowered in
steps until the window fits the screen), the high-contrast palette (outlined check boxes:
``tokviz.app.theme.OutlinedIndicatorStyle``), thicker cursors (``highlight_width``), and a caption
bar at the bottom saying what is on screen (step k of n and the merge just applied, or the
lesson's caption, or one set with `Presenter.set_caption`). Left/Right/PageUp/PageDown/Space step
the timeline (or a running lesson: its ``next()``/``prev()``) wherever the focus is, except while
typing. Leaving restores the exact previous layout, fonts and palette.

The presenter works on the main window as a frame (`PresenterFrame`: geometry,
bars, docks) and gets every other object it touches explicitly (`PresenterParts`, the lesson
runner among them); the window's actions, which call it and so are made after it, are bound with
`bind_actions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QTextDocumentFragment
from PySide6.QtWidgets import QApplication, QLabel, QToolBar, QWidget

from tokviz.app.docks import DockManager, LayoutFrame, raised_panel_ids
from tokviz.app.theme import Appearance
from tokviz.core.display.tokens import undrawn_marked, visible_token
from tokviz.engine.playback import Playback
from tokviz.engine.settings import LAYOUT_VERSION, PRESENTER_SCALE_MIN, AppSettings, clamp_presenter_scale
from tokviz.engine.step_model import StepModel
from tokviz.panels.base import HIGHLIGHT_WIDTH_PROPERTY, SMALL_PRINT_PROPERTY
from tokviz.panels.token_view.panel import TokenViewPanel

from .lesson_runner import LessonRunner
from .presenter_keys import PresenterKeys

PRESENTER_HIGHLIGHT = 3.0  # pen width multiplier while presenting
SMALL_PRINT_PX_1080 = 24  # the least pixel size of any small print (byte-group captions) on a 1080-line screen
FIT_STEP = 0.25  # the font scale goes down by this until the panels fit the screen
SIDE_PANELS = ("training", "vocabulary")  # never the "central" panel picked by default


def step_caption(timeline, k: int, vocab: list[bytes] | None = None) -> str:
    """``Step 3 of 40 · merge: “l” + “o” → “lo” (12×)`` (any algorithm; merges when known)."""
    if timeline is None:
        return "No tokenizer yet: train one (Ctrl+Return) or open a model"
    n = timeline.last_step  # step k = after k merges (rounds), as the timeline counts
    unit = "Round" if getattr(timeline, "step_noun", "merge") == "round" else "Step"
    text = f"{unit} {k:,} of {n:,}"
    if k <= 0:
        return text + " · characters/bytes only, no merges yet"
    st = timeline.steps[k - 1] if k <= len(timeline.steps) else None
    pair, token = getattr(st, "pair", None), getattr(st, "token", None)
    if pair is not None and token is not None and vocab is not None and max(pair) < len(vocab):
        a, b = (_shown(vocab[i]) for i in pair)
        count = getattr(st, "count", None)
        text += f" · merge: “{a}” + “{b}” → “{_shown(token)}”"
        if count:
            text += f" ({count:,}×)"
    return text


def _shown(token: bytes | str) -> str:
    return visible_token(token) if isinstance(token, bytes) else str(token)


class PresenterFrame(LayoutFrame, Protocol):
    """A frame that can take the whole screen with a caption bar (presenter mode)."""

    def showFullScreen(self) -> None: ...

    def windowState(self) -> Qt.WindowState: ...

    def setWindowState(self, state: Qt.WindowState) -> None: ...

    def addToolBar(self, area: Qt.ToolBarArea, bar: QToolBar) -> None: ...

    def removeToolBar(self, bar: QToolBar) -> None: ...

    def focusWidget(self) -> QWidget | None: ...

    def minimumSizeHint(self) -> QSize: ...


@dataclass(frozen=True)
class PresenterParts:
    """What presenter mode changes besides the frame: panels (through `docks`), fonts and palette
    (`appearance`), the stored scale (`settings`), the caption's source (`step_model`), the token
    palette (`token_view`), what the clicker keys step (`playback`, the timeline's) and the lesson
    runner, whose running lesson picks the panels, captions the screen and takes the clicker keys."""

    docks: DockManager
    appearance: Appearance
    settings: AppSettings
    step_model: StepModel
    token_view: TokenViewPanel
    playback: Playback
    lessons: LessonRunner


class Presenter(QObject):
    """Presenter mode of one window. `active_changed(bool)`, `caption_changed(text)`."""

    active_changed = Signal(bool)
    caption_changed = Signal(str)

    def __init__(self, frame: PresenterFrame, parts: PresenterParts, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.frame = frame  # the frame presented: geometry, bars and docks
        self.parts = parts
        self.lessons: LessonRunner | None = parts.lessons
        parts.lessons.caption_changed.connect(self._update_caption)
        self._actions: dict[str, QAction] = {}  # cancel, presenter, presenter_leave (`bind_actions`)
        self.panel_ids: list[str] = []
        self.scale = 1.0  # the scale in use: the one asked for, or less when the panels did not fit
        self.screen_size: QSize | None = None  # what to fit into (None: the window's screen)
        self._saved: dict | None = None
        self._settling: dict | None = None  # the normal layout, put back again as the window settles
        self._keys: PresenterKeys | None = None
        self._bar: QToolBar | None = None
        self._label: QLabel | None = None
        self._manual_caption = ""
        self._caption_sources: list = []  # the signals that change the caption while presenting
        self._vocab: tuple[object, int, list[bytes]] | None = None  # (timeline, n_steps, token bytes)

    def bind_actions(self, *, cancel: QAction, toggle: QAction, leave: QAction) -> None:
        """The window's Cancel (its Esc is taken while presenting), Presenter and Leave actions."""
        self._actions = {"cancel": cancel, "toggle": toggle, "leave": leave}

    @property
    def active(self) -> bool:
        return self._saved is not None

    def _lesson_running(self) -> bool:
        return self.lessons is not None and self.lessons.lesson is not None

    @property
    def caption(self) -> str:
        return self._label.text() if self._label is not None else ""

    # -- entering and leaving ---------------------------------------------------------------

    def default_panels(self) -> list[str]:
        docks = self.parts.docks
        if self._lesson_running() and self.lessons.panel_ids:
            return [p for p in self.lessons.panel_ids if p in docks.panel_ids()][:2]
        raised = [p for p in raised_panel_ids(docks) if p not in SIDE_PANELS]
        focus = self.frame.focusWidget()  # the panel the user is in (a workspace shows several)
        mine = [p for p in raised if focus is not None and docks.dock(p).isAncestorOf(focus)]
        return (mine or raised)[:1] or ["timeline"]

    def enter(self, panel_ids: list[str] | None = None, scale: float | None = None) -> None:
        w, P, A = self.frame, self.parts, self._actions
        if self.active:
            self.leave()
        if self._settling is not None:
            self._settling = None
            w.removeEventFilter(self)
        ids = [p for p in (panel_ids or self.default_panels()) if p in P.docks.panel_ids()][:2] or ["timeline"]
        scale = clamp_presenter_scale(scale if scale is not None else P.settings.presenter_scale())
        tv = P.token_view
        self._saved = {
            "geometry": w.saveGeometry(), "state": w.saveState(LAYOUT_VERSION), "window_state": w.windowState(),
            "size": w.size(),
            "menu": w.menuBar().isVisible(), "status": w.statusBar().isVisible(),
            "font_scale": P.appearance.font_scale, "token_palette": tv.palette_key,
            "cancel_keys": A["cancel"].shortcuts(),
        }
        self.panel_ids, self.scale = ids, scale
        QApplication.instance().setProperty(SMALL_PRINT_PROPERTY, self._small_print_px())
        for pid in ids:  # each panel lays itself out for the back row (first: it keeps its layout as is)
            P.docks.panel(pid).set_presenting(True)
        A["cancel"].setShortcuts([])  # Esc leaves presenter mode instead
        A["leave"].setEnabled(True)
        w.menuBar().hide()
        w.statusBar().hide()
        for bar in w.findChildren(QToolBar):
            bar.hide()
        docks = [P.docks.dock(p) for p in ids]
        for dock in P.docks.docks():
            if dock not in docks:
                dock.hide()
        for dock in docks:
            dock.setFloating(False)
            dock.setTitleBarWidget(QWidget())  # no dock title bars on the projector
            dock.show()
        w.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, docks[0])
        if len(docks) > 1:
            w.splitDockWidget(docks[0], docks[1], Qt.Orientation.Horizontal)
        self._build_caption_bar()
        P.appearance.set_high_contrast(True)  # before the big font: it switches styles (`theme`)
        P.appearance.set_font_scale(scale, save=False)
        self.scale = self._fit_scale(scale)
        QApplication.instance().setProperty(HIGHLIGHT_WIDTH_PROPERTY, PRESENTER_HIGHLIGHT)
        tv.set_palette_key("high-contrast")
        self._keys = PresenterKeys(self.frame.window(), self.parts.playback, lambda: self.lessons, parent=self)
        QApplication.instance().installEventFilter(self._keys)
        self._caption_sources = [P.step_model.step_changed, P.step_model.timeline_changed,
                                 P.token_view.result_shown, *(P.docks.panel(p).presented_changed for p in ids)]
        for signal in self._caption_sources:
            signal.connect(self._update_caption)
        w.installEventFilter(self)  # two panels share the width whatever size the window gets
        w.showFullScreen()
        self._balance()
        docks[0].raise_()
        A["toggle"].setChecked(True)
        self._update_caption()
        self.active_changed.emit(True)

    def leave(self) -> None:
        if not self.active:
            return
        w, saved, A = self.frame, self._saved, self._actions
        self._saved = None
        w.setUpdatesEnabled(False)  # the window paints once, restored: no half-drawn frames on the way
        try:
            self._restore(saved)
        finally:
            w.setUpdatesEnabled(True)
        # once more after the window has its size again: dock splits are kept to the pixel (and
        # again at each resize the window manager still delivers, until the size is the saved one)
        self._settling = saved
        w.installEventFilter(self)
        QTimer.singleShot(0, self, self._settle)
        A["cancel"].setShortcuts(saved["cancel_keys"])
        A["leave"].setEnabled(False)
        A["toggle"].setChecked(False)
        self.active_changed.emit(False)

    def _restore(self, saved: dict) -> None:
        """The window as it was before presenting: panels, bars, fonts, palette, state and layout."""
        w, P = self.frame, self.parts
        app = QApplication.instance()
        w.removeEventFilter(self)
        if self._keys is not None:
            app.removeEventFilter(self._keys)
            self._keys.deleteLater()
            self._keys = None
        for signal in self._caption_sources:
            signal.disconnect(self._update_caption)
        self._caption_sources = []
        for dock in P.docks.docks():  # hidden until the normal layout is back: resizing the full-screen
            dock.hide()  # panels on the way would leave a hidden tab with the presenter's size and layout
        if self._bar is not None:
            w.removeToolBar(self._bar)
            self._bar.deleteLater()
            self._bar, self._label = None, None
        for dock in P.docks.docks():
            if dock.titleBarWidget() is not None:
                old = dock.titleBarWidget()
                dock.setTitleBarWidget(None)
                old.deleteLater()
        app.setProperty(HIGHLIGHT_WIDTH_PROPERTY, None)
        app.setProperty(SMALL_PRINT_PROPERTY, None)
        P.appearance.set_font_scale(saved["font_scale"], save=False)
        P.appearance.set_high_contrast(False)  # after the font: it switches styles (`theme`)
        P.token_view.set_palette_key(saved["token_palette"])
        # straight from full screen to the saved state; a maximized window keeps its normal geometry
        # (Qt's, from before full screen): restoring it too would show it unmaximized for a moment
        w.setWindowState(saved["window_state"])
        if not (saved["window_state"] & (Qt.WindowState.WindowMaximized | Qt.WindowState.WindowFullScreen)):
            w.restoreGeometry(saved["geometry"])
            w.resize(saved["size"])  # restoreGeometry fits the window onto the screen; keep its size
        w.menuBar().setVisible(saved["menu"])
        w.statusBar().setVisible(saved["status"])
        w.restoreState(saved["state"], LAYOUT_VERSION)
        for pid in self.panel_ids:  # last: the panels' own layouts as they were
            P.docks.panel(pid).set_presenting(False)

    def _screen(self) -> QSize | None:
        w = self.frame
        return self.screen_size or (w.screen().geometry().size() if w.screen() is not None else None)

    def _small_print_px(self) -> int:
        """Small print as readable as `SMALL_PRINT_PX_1080` on a 1080-line screen, on this screen."""
        screen = self._screen()
        return round(SMALL_PRINT_PX_1080 * (screen.height() if screen is not None else 1080) / 1080)

    def _fit_scale(self, scale: float) -> float:
        """The largest font scale <= `scale` (in `FIT_STEP`s, at least the minimum) at which the
        window's minimum size fits the screen: two panels never push the window off a projector."""
        w = self.frame
        screen = self._screen()
        while screen is not None and scale > PRESENTER_SCALE_MIN:
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # sizes after hiding parts
            need = w.minimumSizeHint()
            if need.width() <= screen.width() and need.height() <= screen.height():
                break
            scale = max(PRESENTER_SCALE_MIN, scale - FIT_STEP)
            self.parts.appearance.set_font_scale(scale, save=False)
        return scale

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.frame and event.type() == QEvent.Type.Resize:
            # once the window's layout has the new size
            QTimer.singleShot(0, self, self._balance if self.active else self._settle)
        return False

    def leave_for_layout(self) -> None:
        """Leave presenter mode because another layout comes next (a workspace): the normal layout is
        put back now, and not again as the window settles."""
        self.leave()
        if self._settling is not None:
            self._settling = None
            self.frame.removeEventFilter(self)

    def _settle(self) -> None:
        """After leaving: the normal dock state again, now that the window has a new size; done
        once the window is back at its saved size (or maximized)."""
        saved, w = self._settling, self.frame
        if saved is None or self.active:
            return
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # minimum sizes at the normal fonts
        w.restoreState(saved["state"], LAYOUT_VERSION)
        if w.size() == saved["size"] or w.isMaximized() or w.isFullScreen():
            self._settling = None
            w.removeEventFilter(self)

    def _balance(self) -> None:
        """Two panels get half of the width each (or as near as their minimum widths allow)."""
        w = self.frame
        if self.active and len(self.panel_ids) == 2:
            half = w.width() // 2
            w.resizeDocks([self.parts.docks.dock(p) for p in self.panel_ids], [half, half], Qt.Orientation.Horizontal)

    def normal_layout(self) -> tuple | None:
        """(geometry, dock state, size) of the window before presenting, or None when not presenting."""
        s = self._saved
        return None if s is None else (s["geometry"], s["state"], s["size"])

    def toggle(self) -> None:
        if self.active:
            self.leave()
        else:
            self.enter()

    # -- captions ---------------------------------------------------------------------------

    def _build_caption_bar(self) -> None:
        bar = QToolBar("Caption", self.frame.window())
        bar.setObjectName("presenter_caption_bar")
        bar.setMovable(False)
        bar.setFloatable(False)
        label = QLabel(objectName="presenter_caption")
        label.setWordWrap(True)
        label.setMargin(8)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        bar.addWidget(label)
        label.setSizePolicy(label.sizePolicy().Policy.Expanding, label.sizePolicy().Policy.Preferred)
        self.frame.addToolBar(Qt.ToolBarArea.BottomToolBarArea, bar)
        self._bar, self._label = bar, label

    def set_caption(self, text: str) -> None:
        """Show `text` instead of the automatic caption ("" goes back to automatic)."""
        self._manual_caption = text or ""
        self._update_caption()

    def _token_bytes(self, timeline) -> list[bytes] | None:
        if timeline is None or not hasattr(timeline, "token_bytes"):
            return None
        cached = self._vocab
        if cached is None or cached[0] is not timeline or cached[1] != timeline.n_steps:
            try:
                self._vocab = cached = (timeline, timeline.n_steps, list(timeline.token_bytes()))
            except Exception:  # noqa: BLE001 - a caption never breaks presenting
                return None
        return cached[2]

    def _shown_caption(self) -> str:
        """What the panels on screen say they show, when that is not the window's tokenizer at its
        step: the Compare panel's models, the token view's row when nothing is trained ("" else)."""
        P = self.parts
        if P.step_model.timeline is not None and "timeline" in self.panel_ids:
            return ""  # the timeline steps: the step and its merge say what is shown
        for pid in self.panel_ids:
            panel = P.docks.panel(pid)
            text = panel.presenter_caption()
            if not text and panel is P.token_view and P.step_model.timeline is None:
                text = QTextDocumentFragment.fromHtml(P.token_view.model_cue.text()).toPlainText()
            if text:
                return text
        return ""

    def _update_caption(self, *_args) -> None:
        if self._label is None:
            return
        lesson = self.lessons.caption if self._lesson_running() else ""
        text = self._manual_caption or lesson
        if not text:
            sm = self.parts.step_model
            text = self._shown_caption() or step_caption(sm.timeline, sm.step, self._token_bytes(sm.timeline))
        text = undrawn_marked(text)  # a lesson's emoji or script no font has: U+XXXX, not a box
        if text != self._label.text():
            self._label.setText(text)
            self.caption_changed.emit(text)
