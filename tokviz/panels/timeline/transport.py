"""`TransportBar`: the timeline's transport row: buttons, slider, step box, speed, loop, follow.

It only talks to a `Playback` and the shared `StepModel`; keys (Space, Left/Right, Home/End)
are shortcuts of the whole timeline panel (``tokviz.panels.timeline.panel``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, Slot
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QSpinBox,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.engine.playback import SPEEDS, Playback


def transport_icon(kind: str, color: QColor, size: int = 32) -> QIcon:
    """A media icon drawn in `color` (the style's icons are black on every theme).

    Kinds: home, back, play, pause, forward, end."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(color)
    u = size / 16

    def tri(x0: float, x1: float) -> None:  # triangle pointing from x0 to x1
        p.drawPolygon(QPolygonF([QPointF(x0 * u, 3 * u), QPointF(x1 * u, 8 * u), QPointF(x0 * u, 13 * u)]))

    if kind == "play":
        tri(4, 13)
    elif kind == "pause":
        p.drawRect(QRectF(4 * u, 3 * u, 3 * u, 10 * u))
        p.drawRect(QRectF(9 * u, 3 * u, 3 * u, 10 * u))
    elif kind == "forward":
        tri(3, 9)
        tri(8, 14)
    elif kind == "back":
        tri(13, 7)
        tri(8, 2)
    elif kind == "end":
        tri(3, 11)
        p.drawRect(QRectF(11 * u, 3 * u, 2 * u, 10 * u))
    elif kind == "home":
        p.drawRect(QRectF(3 * u, 3 * u, 2 * u, 10 * u))
        tri(13, 5)
    p.end()
    return QIcon(pm)


class ClickerKeys(QObject):
    """Application event filter: transport keys anywhere in `window` (classroom remote clickers).

    Left/PageUp step back, Right/PageDown step forward, Space plays or pauses, Home/End jump;
    keys typed into a text field or a spin box are left alone."""

    def __init__(self, playback: Playback, window: QWidget) -> None:
        super().__init__(window)
        self.playback = playback
        self.window = window
        pb = playback
        self.keys = {Qt.Key.Key_Left: pb.step_back, Qt.Key.Key_PageUp: pb.step_back,
                     Qt.Key.Key_Right: pb.step_forward, Qt.Key.Key_PageDown: pb.step_forward,
                     Qt.Key.Key_Space: pb.toggle, Qt.Key.Key_Home: pb.go_home, Qt.Key.Key_End: pb.go_end}

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.KeyPress or event.modifiers() not in (
                Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier):
            return False
        slot = self.keys.get(Qt.Key(event.key()))
        if slot is None or not isinstance(obj, QWidget) or obj.window() is not self.window or focus_is_typing():
            return False
        slot()
        return True


def focus_is_typing() -> bool:
    """True while the focus is in a text field, spin box or combo box: its keys are its own."""
    w = QApplication.focusWidget()
    if isinstance(w, (QLineEdit, QAbstractSpinBox, QComboBox)):
        return True
    return isinstance(w, (QPlainTextEdit, QTextEdit)) and not w.isReadOnly()


def _speed_text(s: float) -> str:
    return f"{s:g} steps/s"


class TransportBar(QWidget):
    """Home, back, play/pause, forward, end, slider, step box, speed, loop, follow."""

    def __init__(self, playback: Playback, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback = playback
        self.step_model = playback.step_model

        def button(name: str, icon: str, tip: str, slot) -> QToolButton:
            b = QToolButton(objectName=name)
            b.setProperty("transport_icon", icon)
            b.setToolTip(tip)
            b.setAutoRaise(True)
            b.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            b.clicked.connect(slot)
            return b

        self.home_button = button("timeline_home", "home", "First step, no merges (Home)", playback.go_home)
        self.back_button = button("timeline_back", "back", "Step back (Left)", playback.step_back)
        self.play_button = button("timeline_play", "play", "Play / pause (Space)", playback.toggle)
        self.forward_button = button("timeline_forward", "forward", "Step forward (Right)", playback.step_forward)
        self.end_button = button("timeline_end", "end", "Last step (End)", playback.go_end)
        self.slider = QSlider(Qt.Orientation.Horizontal, objectName="timeline_slider")
        self.slider.setToolTip("Step k: the corpus segmented with the first k merges")
        self.slider.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.spin = QSpinBox(objectName="timeline_step")
        self.spin.setToolTip("Step k (number of merges applied)")
        self.spin.setKeyboardTracking(False)
        self.total_label = QLabel(objectName="timeline_total")
        self.speed_box = QComboBox(objectName="timeline_speed")
        self.speed_box.setToolTip("Playback speed")
        for s in SPEEDS:
            self.speed_box.addItem(_speed_text(s), s)
        self.loop_box = QCheckBox("Loop", objectName="timeline_loop")
        self.loop_box.setToolTip("Start over after the last step")
        self.follow_box = QCheckBox("Follow", objectName="timeline_follow")
        self.follow_box.setToolTip("Keep showing the newest merge while training runs")
        self.clicker_box = QCheckBox("Clicker keys", objectName="timeline_clicker")
        self.clicker_box.setToolTip("Left/Right (PageUp/PageDown), Space, Home and End drive the timeline "
                                    "anywhere in the window, except while typing (for remote clickers)")
        self.clicker_box.toggled.connect(self._on_clicker_box_toggled)
        self._clicker: ClickerKeys | None = None

        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(2)
        row = QHBoxLayout()  # buttons and the slider get the whole width
        row.setSpacing(4)
        for w in (self.home_button, self.back_button, self.play_button, self.forward_button, self.end_button):
            row.addWidget(w)
        row.addWidget(self.slider, 1)
        rows.addLayout(row)
        row = QHBoxLayout()
        row.setSpacing(6)
        row.addWidget(QLabel("Step"))
        row.addWidget(self.spin)
        row.addWidget(self.total_label)
        row.addSpacing(8)
        row.addWidget(self.speed_box)
        row.addWidget(self.loop_box)
        row.addWidget(self.follow_box)
        row.addWidget(self.clicker_box)
        row.addStretch(1)
        rows.addLayout(row)

        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.spin.valueChanged.connect(self._on_spin_value_changed)
        self.speed_box.currentIndexChanged.connect(self._on_speed_box_changed)
        self.loop_box.toggled.connect(playback.set_loop)
        self.follow_box.toggled.connect(self._on_follow_box_toggled)
        playback.playing_changed.connect(self._update_play_button)
        playback.speed_changed.connect(self._update_speed)
        playback.loop_changed.connect(self.loop_box.setChecked)
        m = self.step_model
        m.timeline_changed.connect(self._update_range)
        m.steps_added.connect(self._update_range)
        m.step_changed.connect(self._update_step)
        self._update_speed(playback.speed)
        self._update_range()
        self._update_icons()

    @Slot()
    def _update_range(self, *_args) -> None:
        n = self.step_model.n_steps
        for w in (self.slider, self.spin):
            w.blockSignals(True)
            w.setRange(0, n)
            w.blockSignals(False)
        self.slider.setPageStep(max(1, n // 20))
        self.total_label.setText(f"of {n:,}")
        self._update_step(self.step_model.step)
        for w in (self.home_button, self.back_button, self.play_button, self.forward_button, self.end_button,
                  self.slider, self.spin):
            w.setEnabled(n > 0)

    @Slot(int)
    def _update_step(self, k: int) -> None:
        for w in (self.slider, self.spin):
            if w.value() != k:
                w.blockSignals(True)
                w.setValue(k)
                w.blockSignals(False)
        self.follow_box.blockSignals(True)
        self.follow_box.setChecked(self.step_model.follows_latest)
        self.follow_box.blockSignals(False)

    @Slot(bool)
    def _update_play_button(self, playing: bool) -> None:
        self.play_button.setProperty("transport_icon", "pause" if playing else "play")
        self._update_icons()

    def _update_icons(self) -> None:
        color = self.palette().color(QPalette.ColorRole.ButtonText)
        for b in (self.home_button, self.back_button, self.play_button, self.forward_button, self.end_button):
            b.setIcon(transport_icon(b.property("transport_icon"), color))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "end_button"):
            self._update_icons()
        super().changeEvent(event)

    @Slot(float)
    def _update_speed(self, speed: float) -> None:
        i = self.speed_box.findData(speed)
        if i < 0:
            self.speed_box.addItem(_speed_text(speed), speed)
            i = self.speed_box.count() - 1
        self.speed_box.blockSignals(True)
        self.speed_box.setCurrentIndex(i)
        self.speed_box.blockSignals(False)

    @Slot(int)
    def _on_slider_value_changed(self, k: int) -> None:
        self.playback.jump(k)

    @Slot(int)
    def _on_spin_value_changed(self, k: int) -> None:
        self.playback.jump(k)

    @Slot(int)
    def _on_speed_box_changed(self, i: int) -> None:
        self.playback.set_speed(float(self.speed_box.itemData(i)))

    @Slot(bool)
    def _on_clicker_box_toggled(self, on: bool) -> None:
        app = QApplication.instance()
        if self._clicker is not None:
            app.removeEventFilter(self._clicker)
            self._clicker.deleteLater()
            self._clicker = None
        if on:
            self._clicker = ClickerKeys(self.playback, self.window())
            app.installEventFilter(self._clicker)

    def set_clicker_keys(self, on: bool) -> None:
        self.clicker_box.setChecked(on)

    @Slot(bool)
    def _on_follow_box_toggled(self, on: bool) -> None:
        if on:
            self.playback.pause()
            self.step_model.follow_latest()
        elif self.step_model.follows_latest and self.step_model.n_steps > 0 and not self.step_model.is_finished:
            # the step model follows whenever k is the last step: stop one step short to freeze
            self.step_model.set_step(self.step_model.step - 1)
