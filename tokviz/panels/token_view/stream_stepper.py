"""`StreamStepper`: the token view's "Stream" tab, the text's ids decoded one at a time as a server
streams a model's output (`tokviz.core.decode_stream`): step through the ids and see what each one
adds, and that an id ending inside a character adds nothing until the character is complete.

Steps are decoded on demand up to the one shown (a long text costs nothing until it is stepped
through), and only the first `MAX_STREAM_IDS` ids. What it leaves out: encoding (it follows the
panel's reference row once a result is shown).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QSlider, QToolButton, QVBoxLayout, QWidget

from tokviz.core.decode_stream import DecodeStream, StreamStep
from tokviz.core.display.tokens import visible_token
from tokviz.core.errors import TokvizError

MAX_STREAM_IDS = 5_000  # decoded on the GUI thread, a few at a time as the user steps


class StreamStepper(QWidget):
    """Step through a tokenizer's streaming decode of some ids (`set_source`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("token_stream")
        self._tokenizer = None
        self._ids: list[int] = []
        self._stream: DecodeStream | None = None
        self._steps: list[StreamStep] = []
        self._pieces: list[str] = []  # the text each step added ("" while held back)
        self._error = ""
        self.first_button, self.back_button, self.next_button, self.last_button = (
            QToolButton(text=t, objectName=f"token_stream_{n}", toolTip=tip)
            for t, n, tip in (("⏮", "first", "Before the first id"), ("◀", "back", "One id back"),
                              ("▶", "next", "Decode the next id"), ("⏭", "last", "Decode every id")))
        self.slider = QSlider(Qt.Orientation.Horizontal, objectName="token_stream_slider")
        self.slider.setToolTip("Ids decoded so far")
        self.step_label = QLabel(objectName="token_stream_step", wordWrap=True)
        self.step_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_view = QPlainTextEdit(objectName="token_stream_text", readOnly=True)
        self.text_view.setPlaceholderText("The text a server would have sent so far")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for w in (self.first_button, self.back_button, self.slider, self.next_button, self.last_button):
            bar.addWidget(w, 1 if w is self.slider else 0)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.step_label)
        layout.addWidget(self.text_view, 1)
        self.first_button.clicked.connect(lambda: self.slider.setValue(0))
        self.back_button.clicked.connect(lambda: self.slider.setValue(self.slider.value() - 1))
        self.next_button.clicked.connect(lambda: self.slider.setValue(self.slider.value() + 1))
        self.last_button.clicked.connect(lambda: self.slider.setValue(self.slider.maximum()))
        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.set_source(None, [])

    @classmethod
    def attach(cls, panel) -> StreamStepper:
        """A "Stream" tab in `panel`'s tabs, following its reference row (`result_shown`)."""
        stepper = cls()
        panel.tabs.addTab(stepper, "Stream")

        def follow() -> None:
            ref = panel.result.reference if panel.result is not None else None
            stepper.set_source(None if ref is None else ref.tokenizer, [] if ref is None else ref.encoding.ids)
        panel.result_shown.connect(follow)
        return stepper

    def set_source(self, tokenizer, ids: list[int]) -> None:
        """Stream `ids` with `tokenizer`'s decoder, from the start (nothing decoded yet)."""
        same = tokenizer is self._tokenizer and list(ids[:MAX_STREAM_IDS]) == self._ids
        self._tokenizer, self._ids = tokenizer, list(ids[:MAX_STREAM_IDS])
        self._more = len(ids) - len(self._ids)
        if not same or self._error:
            self._stream = None if tokenizer is None else DecodeStream(tokenizer)
            self._steps, self._pieces, self._error = [], [], ""
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(self._ids))
        if not same:
            self.slider.setValue(0)
        self.slider.blockSignals(False)
        self._update_view()

    @property
    def position(self) -> int:
        """Ids decoded so far (0: none)."""
        return self.slider.value()

    def set_position(self, k: int) -> None:
        self.slider.setValue(k)

    def text_so_far(self) -> str:
        return self.text_view.toPlainText()

    def _decode_up_to(self, k: int) -> None:
        while len(self._steps) < k and self._stream is not None and not self._error:
            tid = self._ids[len(self._steps)]
            try:
                added = self._stream.step(tid)
            except TokvizError as exc:  # a decoder that rewrites emitted text, an id past the vocabulary
                self._error = str(exc)
                return
            self._pieces.append(added or "")
            self._steps.append(StreamStep(tid, added, (self._steps[-1].end if self._steps else 0) + len(added or "")))

    @Slot(int)
    def _on_slider_value_changed(self, _value: int) -> None:
        self._update_view()

    def _update_view(self) -> None:
        k = self.slider.value()
        self._decode_up_to(k)
        k = min(k, len(self._steps))
        for b in (self.first_button, self.back_button):
            b.setEnabled(k > 0)
        for b in (self.next_button, self.last_button):
            b.setEnabled(k < len(self._ids) and not self._error)
        self.text_view.setPlainText("".join(self._pieces[:k]))
        self.step_label.setText(self._describe(k))

    def _describe(self, k: int) -> str:
        if self._error:
            return f"Cannot stream past id {len(self._steps) + 1}: {self._error}"
        if not self._ids:
            return "No ids to stream yet."
        more = f" (the first {len(self._ids):,}; {self._more:,} more not streamed)" if self._more else ""
        if k == 0:
            return f"{len(self._ids):,} ids to stream{more}: press ▶ to decode them one at a time."
        step = self._steps[k - 1]
        where = f"id {k:,}/{len(self._ids):,}{more}: {step.id}"
        if step.added is None:
            return f"{where} adds nothing yet: held back until the character it starts is complete"
        return f"{where} adds {visible_token(step.added.encode('utf-8', 'surrogateescape'))}"
