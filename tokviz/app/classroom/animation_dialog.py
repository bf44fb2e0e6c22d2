"""File > Export Animation…: the dialog that asks for steps, panel, size and speed, then exports
with a progress dialog (`AnimationExporter` does the work)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
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

from .animation import TARGETS, AnimationExporter, AnimationSpec
from .frames import frame_path


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


def run_export_dialog(exporter: AnimationExporter, parent: QWidget) -> bool:
    """File > Export Animation…: ask for the options and the output, then export with progress
    (the dialogs belong to `parent`)."""
    sm, dialogs, store = exporter.step_model, exporter.services.dialogs, exporter.services.settings
    if sm.timeline is None:
        dialogs.info("No timeline yet", "Train a tokenizer (or open a model) first.")
        return False
    dialog = AnimationDialog(sm.n_steps, sm.step, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return False
    fmt = dialog.format.currentData()
    suggested = str(Path(store.last_dir()) / ("timeline.gif" if fmt == "gif" else "timeline-frames"))
    filters = "Animated GIF (*.gif)" if fmt == "gif" else "Folder for the PNG files (*)"
    path = dialogs.save_path("Export Animation", suggested, filters)
    if not path:
        return False
    if fmt != "gif":  # a folder: the dialog never saw the frame files it already holds
        taken = [f for i in range(len(dialog.spec(path).steps())) if (f := frame_path(Path(path), i)).exists()]
        if taken and not dialogs.ask_overwrite(taken):
            return False
    store.set_last_dir(Path(path).parent)
    progress = QProgressDialog("Rendering frames…", "Cancel", 0, 1000, parent)
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
