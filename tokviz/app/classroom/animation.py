"""File > Export Animation…: the timeline replay of a range of steps as a GIF or PNG sequence.

`AnimationExporter` renders one frame per event-loop turn from a `QTimer` (widgets can only be
painted on the GUI thread, so the window stays responsive): it moves the shared `StepModel` to the
frame's step, lets the chosen panel catch up (the token view encodes in the background), grabs
it and scales it into a ``width x height`` frame. The frames are then encoded on a worker thread
(`TaskEngine` + `tokviz.core.io.gif`): an animated GIF, or ``frame_0001.png`` ... in a folder.
Signals: `progress_changed(what, fraction)`, then one of `finished(path)`, `cancelled()`,
`failed(message)`. The step shown before the export is restored afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QPoint, QRect, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QPainter,
    QPalette,
    QPixmap,
    QRegion,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QProgressDialog,
    QSpinBox,
    QWidget,
)

from tokviz.core import TokvizError
from tokviz.core.io.gif import write_gif, write_png
from tokviz.core.io.model_files import write_atomic
from tokviz.core.text.chunks import Cancelled
from tokviz.engine.tasks import TaskEngine

from .presenter import step_caption

TARGETS = {"timeline": "Merge timeline (whole panel)", "corpus": "Corpus at step k",
           "token_view": "Token view (tokens)"}
FORMATS = ("gif", "png")
MAX_FRAMES = 600
POLL_MS = 10
MAX_UPSCALE = 2.0  # a grabbed image is enlarged at most this much (more only blurs)
MAX_RENDER_SCALE = 4.0  # small panels are rendered at most this much larger (sharp)
FRAME_TIMEOUT_POLLS = 1000  # 10 s for the token view to encode one frame


@dataclass(frozen=True)
class AnimationSpec:
    """What to export: steps ``first..last`` every `every`, `target` panel, size and speed."""

    path: Path  # the .gif file, or the folder of the PNG sequence
    first: int = 0
    last: int = 10
    every: int = 1
    target: str = "timeline"
    width: int = 800
    height: int = 500
    ms_per_frame: int = 500
    format: str = "gif"  # noqa: A003 - "gif" or "png"
    loop: bool = True
    caption: bool = True  # "Step k of n · merge a + b → ab" under each frame

    def steps(self) -> list[int]:
        out = list(range(self.first, self.last + 1, max(1, self.every)))
        if out and out[-1] != self.last and self.last >= self.first:
            out.append(self.last)  # always end on the last step asked for
        return out

    def check(self, n_steps: int) -> "AnimationSpec":
        """Raise `TokvizError` (saying what to change) for an impossible export."""
        if self.target not in TARGETS:
            raise TokvizError(f"unknown panel {self.target!r}; choose {', '.join(TARGETS)}")
        if self.format not in FORMATS:
            raise TokvizError(f"unknown format {self.format!r}; choose gif or png")
        if not 0 <= self.first <= self.last <= n_steps:
            raise TokvizError(f"steps {self.first}..{self.last} are outside 0..{n_steps}")
        if not (16 <= self.width <= 4096 and 16 <= self.height <= 4096):
            raise TokvizError("the frame size must be between 16 and 4096 pixels")
        if not 10 <= self.ms_per_frame <= 60_000:
            raise TokvizError("each frame must last between 10 ms and 60 s")
        if len(self.steps()) > MAX_FRAMES:
            raise TokvizError(f"{len(self.steps()):,} frames is too many (at most {MAX_FRAMES}); "
                              "raise 'every' or shorten the range")
        return self


def image_to_array(image: QImage) -> np.ndarray:
    """``(h, w, 3)`` uint8 RGB copy of a QImage."""
    img = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=bpl * h).reshape(h, bpl)
    return buf[:, :w * 3].reshape(h, w, 3).copy()


def caption_font(caption: str, width: int, height: int) -> QFont:
    """A bold font about 1/16 of the frame high (readable on a slide), smaller if `caption` would
    not fit the width."""
    font = QFont()
    font.setBold(True)
    size = max(9, height // 16)
    font.setPixelSize(size)
    while size > 9 and QFontMetrics(font).horizontalAdvance(caption) > width - 16:
        size -= 1
        font.setPixelSize(size)
    return font


def caption_strip(caption: str, width: int, height: int) -> int:
    """Height in pixels of the caption strip at the bottom of a frame (0 without a caption)."""
    return QFontMetrics(caption_font(caption, width, height)).height() * 3 // 2 if caption else 0


def fit_image(image: QImage, width: int, height: int, background: QColor, *, caption: str = "",
              color: QColor | None = None) -> QImage:
    """`image` scaled (keeping its aspect) onto a ``width x height`` canvas, with `caption` in a
    strip at the bottom (shrunk to fit the width, elided if it still does not)."""
    out = QImage(width, height, QImage.Format.Format_RGB32)
    out.fill(background)
    p = QPainter(out)
    strip = caption_strip(caption, width, height)
    if caption:
        font = caption_font(caption, width, height)
        p.setFont(font)
        p.setPen(color if color is not None else QColor("#000000"))
        text = QFontMetrics(font).elidedText(caption, Qt.TextElideMode.ElideRight, width - 16)
        p.drawText(QRect(8, height - strip, width - 16, strip),
                   Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextSingleLine, text)
    scale = min(width / image.width(), (height - strip) / image.height(), MAX_UPSCALE)
    scaled = image.scaled(max(1, round(image.width() * scale)), max(1, round(image.height() * scale)),
                          Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
    p.drawImage((width - scaled.width()) // 2, (height - strip - scaled.height()) // 2, scaled)
    p.end()
    return out


def render_crisp(widget: QWidget, size: tuple[int, int], width: int, height: int,
                 origin: tuple[int, int] = (0, 0)) -> QImage:
    """The `size` (logical pixels) of `widget` from `origin`, rendered at the scale that fills a
    ``width x height`` area (at most `MAX_RENDER_SCALE`): text stays sharp instead of being
    enlarged afterwards."""
    w, h = size
    scale = max(1.0, min(width / w, height / h, MAX_RENDER_SCALE))
    pixmap = QPixmap(max(1, round(w * scale)), max(1, round(h * scale)))
    pixmap.setDevicePixelRatio(scale)
    pixmap.fill(widget.palette().color(QPalette.ColorRole.Base))
    widget.render(pixmap, QPoint(0, 0), QRegion(origin[0], origin[1], w, h))
    image = pixmap.toImage()
    image.setDevicePixelRatio(1.0)
    return image


def _used_size(view, width: int, height: int) -> tuple[int, int]:
    """(w, h) of a `TokenFlowView`'s grab that holds tokens (at least 1 x 1)."""
    margin = view.frameWidth() + 6
    n = min(view.token_count, 5000)
    right = max((view.token_rect(i).right() for i in range(n)), default=0) + margin
    return max(1, min(width, right)), max(1, min(height, view.content_height() + margin))


def encode_frames(frames: list[np.ndarray], spec: AnimationSpec, *, should_stop, progress) -> str:
    """Worker: write the GIF or the PNG sequence; returns the path written."""
    if spec.format == "gif":
        data = write_gif(frames, spec.ms_per_frame, loop=spec.loop, should_stop=should_stop, progress=progress)
        write_atomic(Path(spec.path), data)
        return str(spec.path)
    folder = Path(spec.path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TokvizError(f"{folder}: cannot create the folder ({exc.strerror or exc})") from None
    for i, frame in enumerate(frames):
        if should_stop():
            raise Cancelled()
        write_atomic(folder / f"frame_{i + 1:04d}.png", write_png(frame))
        progress("Writing PNG files", (i + 1) / len(frames))
    return str(folder)


class AnimationExporter(QObject):
    """Renders frames on the GUI thread (one per timer tick), encodes them on a worker."""

    progress_changed = Signal(str, float)
    finished = Signal(str)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.encoder = TaskEngine("animation-encoder", self)
        self.encoder.progress_changed.connect(self._on_encoder_progress_changed)
        self.encoder.finished.connect(self._on_encoder_finished)
        self.encoder.failed.connect(self._on_encoder_failed)
        self.encoder.cancelled.connect(self._on_encoder_cancelled)
        self.timer = QTimer(self, singleShot=True)
        self.timer.timeout.connect(self._tick)
        self.spec: AnimationSpec | None = None
        self.frames: list[np.ndarray] = []
        self._steps: list[int] = []
        self._waiting = 0  # polls spent waiting for the current frame
        self._restore_step: int | None = None
        self._token_bytes: list[bytes] | None = None  # for the captions

    @property
    def is_running(self) -> bool:
        return self.spec is not None

    def start(self, spec: AnimationSpec) -> bool:
        """Begin exporting; False (with a message) when the spec cannot work."""
        w = self.window
        if self.is_running:
            self.cancel()
        try:
            if w.step_model.timeline is None:
                raise TokvizError("there is no timeline yet: train a tokenizer or open a model first")
            spec.check(w.step_model.n_steps)
        except TokvizError as exc:
            w.dialogs.error("Cannot export the animation", str(exc)[:1].upper() + str(exc)[1:])
            return False
        self.spec, self.frames, self._steps = spec, [], spec.steps()
        self._token_bytes = None
        self._restore_step = w.step_model.step
        w.timeline_panel.playback.pause()
        w.select_panel("timeline" if spec.target == "corpus" else spec.target)
        self._begin_frame()
        return True

    def cancel(self) -> bool:
        if not self.is_running:
            return False
        self.timer.stop()
        if self.encoder.is_running:
            return self.encoder.cancel()
        self._end()
        self.cancelled.emit()
        return True

    # -- rendering (GUI thread, one frame per tick) -----------------------------------------

    def _widget(self) -> QWidget:
        w, target = self.window, self.spec.target
        if target == "corpus":
            return w.timeline_panel.corpus_view.parentWidget()  # label + corpus view
        if target == "token_view":
            return w.token_view_panel.view
        return w.timeline_panel

    def _vocab(self) -> list[bytes] | None:
        tl = self.window.step_model.timeline
        if self._token_bytes is None and tl is not None and hasattr(tl, "token_bytes"):
            self._token_bytes = list(tl.token_bytes())
        return self._token_bytes

    def _begin_frame(self) -> None:
        k = self._steps[len(self.frames)]
        w = self.window
        w.step_model.set_step(k)
        if self.spec.target == "token_view":
            w.token_view_panel.refresh(delay_ms=0)
        else:
            w.timeline_panel.refresh()
        self._waiting = 0
        self.timer.start(0)

    @Slot()
    def _tick(self) -> None:
        if self.spec is None:
            return
        if self.spec.target == "token_view" and self.window.token_view_panel.engine.is_pending:
            self._waiting += 1
            if self._waiting > FRAME_TIMEOUT_POLLS:
                self._fail("the token view took too long to show a frame")
                return
            self.timer.start(POLL_MS)
            return
        widget = self._widget()
        pal = widget.palette()
        size, origin = (widget.width(), widget.height()), (0, 0)
        if self.spec.target == "token_view":  # the tokens, not the frame and empty space around them
            fw = widget.frameWidth()
            used = _used_size(widget, *size)
            size, origin = (max(1, used[0] - fw), max(1, used[1] - fw)), (fw, fw)
        m = self.window.step_model
        caption = step_caption(m.timeline, m.step, self._vocab()) if self.spec.caption else ""
        spec = self.spec
        grabbed = render_crisp(widget, size, spec.width, spec.height - caption_strip(caption, spec.width, spec.height),
                               origin)
        image = fit_image(grabbed, self.spec.width, self.spec.height, pal.color(QPalette.ColorRole.Base),
                          caption=caption, color=pal.color(QPalette.ColorRole.Text))
        self.frames.append(image_to_array(image))
        n = len(self._steps)
        self.progress_changed.emit("Rendering frames", len(self.frames) / n)
        if len(self.frames) < n:
            self._begin_frame()
            return
        self._restore()
        self.encoder.start(encode_frames, self.frames, self.spec)

    # -- outcomes ---------------------------------------------------------------------------

    def _restore(self) -> None:
        if self._restore_step is not None:
            self.window.step_model.set_step(self._restore_step)
            self._restore_step = None

    def _end(self) -> None:
        self._restore()
        self.spec, self.frames, self._steps = None, [], []

    def _fail(self, message: str) -> None:
        self._end()
        self.failed.emit(message)
        self.window.dialogs.error("Cannot export the animation", message[:1].upper() + message[1:])

    @Slot(str, float)
    def _on_encoder_progress_changed(self, what: str, fraction: float) -> None:
        self.progress_changed.emit(what, fraction)

    @Slot(object)
    def _on_encoder_finished(self, path: str) -> None:
        self._end()
        self.window.statusBar().showMessage(f"Exported animation {path}", 5000)
        self.finished.emit(path)

    @Slot(str)
    def _on_encoder_failed(self, message: str) -> None:
        self._fail(message)

    @Slot()
    def _on_encoder_cancelled(self) -> None:
        self._end()
        self.cancelled.emit()

    def shutdown(self) -> None:
        self.timer.stop()
        self.encoder.shutdown()
        self.spec = None


class AnimationDialog(QDialog):
    """Range, panel, size, speed, format and loop of an animation export."""

    def __init__(self, n_steps: int, step: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("animation_dialog")
        self.setWindowTitle("Export Animation")

        def spin(lo: int, hi: int, value: int, name: str, suffix: str = "") -> QSpinBox:
            s = QSpinBox(objectName=name, minimum=lo, maximum=hi, value=value, suffix=suffix)
            return s

        self.first = spin(0, n_steps, 0, "animation_first")
        self.last = spin(0, n_steps, min(n_steps, max(step, 1)), "animation_last")
        self.every = spin(1, max(1, n_steps), max(1, n_steps // 50), "animation_every")
        self.width_spin = spin(16, 4096, 800, "animation_width", " px")
        self.height_spin = spin(16, 4096, 500, "animation_height", " px")
        self.fps = spin(1, 50, 4, "animation_fps", " frames/s")
        self.target = QComboBox(objectName="animation_target")
        for key, label in TARGETS.items():
            self.target.addItem(label, key)
        self.format = QComboBox(objectName="animation_format")
        self.format.addItem("Animated GIF", "gif")
        self.format.addItem("PNG sequence (frame_0001.png …)", "png")
        self.loop = QCheckBox("Loop forever", objectName="animation_loop", checked=True)
        self.caption = QCheckBox("Caption: step k of n and the merge", objectName="animation_caption", checked=True)
        rng = QHBoxLayout()
        for wdg in (self.first, self.last, self.every):
            rng.addWidget(wdg)
        size = QHBoxLayout()
        size.addWidget(self.width_spin)
        size.addWidget(self.height_spin)
        form = QFormLayout(self)
        form.addRow("Steps (from, to, every)", rng)
        form.addRow("Panel", self.target)
        form.addRow("Size (width, height)", size)
        form.addRow("Speed", self.fps)
        form.addRow("Format", self.format)
        form.addRow("", self.loop)
        form.addRow("", self.caption)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def spec(self, path: str | Path) -> AnimationSpec:
        return AnimationSpec(Path(path), self.first.value(), self.last.value(), self.every.value(),
                             self.target.currentData(), self.width_spin.value(), self.height_spin.value(),
                             round(1000 / self.fps.value()), self.format.currentData(), self.loop.isChecked(),
                             self.caption.isChecked())


def run_export_dialog(window) -> bool:
    """File > Export Animation…: ask for the options and the output, then export with progress."""
    if window.step_model.timeline is None:
        window.dialogs.info("No timeline yet", "Train a tokenizer (or open a model) first.")
        return False
    dialog = AnimationDialog(window.step_model.n_steps, window.step_model.step, window)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return False
    fmt = dialog.format.currentData()
    store = window.settings_store
    suggested = str(Path(store.last_dir()) / ("timeline.gif" if fmt == "gif" else "timeline-frames"))
    filters = "Animated GIF (*.gif)" if fmt == "gif" else "Folder for the PNG files (*)"
    path = window.dialogs.save_path("Export Animation", suggested, filters)
    if not path:
        return False
    store.set_last_dir(Path(path).parent)
    exporter = window.animation
    progress = QProgressDialog("Rendering frames…", "Cancel", 0, 1000, window)
    progress.setWindowTitle("Export Animation")
    progress.setWindowModality(Qt.WindowModality.WindowModal)
    progress.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    progress.canceled.connect(exporter.cancel)

    def on_progress(what: str, fraction: float) -> None:
        progress.setLabelText(f"{what}…")
        progress.setValue(int(fraction * 1000))

    def done(*_args) -> None:
        for sig, slot in ((exporter.progress_changed, on_progress), (exporter.finished, done),
                          (exporter.cancelled, done), (exporter.failed, done)):
            sig.disconnect(slot)
        progress.close()

    exporter.progress_changed.connect(on_progress)
    for sig in (exporter.finished, exporter.cancelled, exporter.failed):
        sig.connect(done)
    if not exporter.start(dialog.spec(path)):
        done()
        return False
    progress.show()
    return True
