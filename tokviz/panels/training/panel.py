"""`TrainingPanel`: every training option, Train and Cancel buttons, and a summary of the result.

Options map one to one onto `tokviz.core.TrainSettings`: units, pre-tokenization (presets or a
custom regex, checked as you type), the budget (vocabulary size, number of merges, or none),
minimum pair count, end-of-word marker and special tokens. Invalid settings are explained under
the form and disable Train.

What this leaves out: running the training (the window hands the settings to `TrainingEngine`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from tokviz.core import SPLIT_PRESETS, SettingsError, Timeline, TokvizError, TrainSettings, merge_budget, parse_split
from tokviz.panels.base import Panel, monospace_font, show_error_text

from .algorithms import GPT_SPLITS, AlgorithmOptions

NON_BPE_SPLIT = "whitespace"  # what picking an algorithm that works on words switches a GPT-style split to

UNIT_CHOICES = (("bytes", "Bytes (UTF-8, 256 base tokens)"), ("chars", "Characters of the corpus"))
SPLIT_CHOICES = (
    ("gpt4", "GPT-4 (cl100k) pattern"),
    ("gpt2", "GPT-2 pattern"),
    ("o200k", "GPT-4o (o200k) pattern"),
    ("whitespace", "Whitespace"),
    ("none", "None: the whole text is one chunk"),
    ("custom", "Custom regular expression…"),
)
TIE_CHOICES = (("first", "First occurrence"), ("hf", "Hugging Face order"))
BUDGET_VOCAB, BUDGET_MERGES, BUDGET_NONE = "vocab_size", "merges", "none"
BUDGET_CHOICES = (
    (BUDGET_VOCAB, "Vocabulary size"),
    (BUDGET_MERGES, "Number of merges"),
    (BUDGET_NONE, "No limit (until min count)"),
)
DEFAULT_SETTINGS = TrainSettings(vocab_size=512)
DEFAULT_CUSTOM_REGEX = r"\w+|[^\w\s]+|\s+"
MAX_BUDGET = 10_000_000
COMBO_CHARS = 12  # a choice box is at least this many characters wide, and grows with its column


def _combo(choices: tuple[tuple[str, str], ...], name: str) -> QComboBox:
    box = QComboBox(objectName=name)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(COMBO_CHARS)  # long labels elide in a narrow dock, not widen it
    for key, label in choices:
        box.addItem(label, key)
    return box


def _buddy_label(text: str, buddy: QWidget) -> QLabel:
    label = QLabel(text)
    label.setBuddy(buddy)
    return label


class TrainingPanel(Panel):
    """Training options. Emits `train_requested` / `cancel_requested`; read `settings()`."""

    PANEL_ID = "training"
    TITLE = "Training"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    train_requested = Signal()
    cancel_requested = Signal()
    settings_changed = Signal()
    validity_changed = Signal()  # read `is_valid`

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._running = False
        self._valid = True
        self._custom_regex = DEFAULT_CUSTOM_REGEX
        self._custom_edited = False  # until the user edits it, Custom starts from the last preset
        self._build()
        self.set_settings(DEFAULT_SETTINGS)
        self._update_fonts()

    # -- building ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.units_box = _combo(UNIT_CHOICES, "units_box")
        self.units_box.setToolTip("What BPE starts from: the 256 byte values, or the corpus's characters")
        self.split_box = _combo(SPLIT_CHOICES, "split_box")
        self.split_box.setToolTip("Pre-tokenization: the text is cut into chunks that merges never cross")
        self.pattern_edit = QLineEdit(objectName="pattern_edit")
        self.pattern_edit.setPlaceholderText("a regular expression; each match is one chunk")
        self.pattern_error = QLabel(objectName="pattern_error", wordWrap=True)
        self.pattern_error.hide()
        self.budget_box = _combo(BUDGET_CHOICES, "budget_box")
        self.budget_spin = QSpinBox(objectName="budget_spin")
        self.budget_spin.setRange(1, MAX_BUDGET)
        self.budget_spin.setGroupSeparatorShown(True)
        self.budget_spin.setAccelerated(True)
        budget_row = QHBoxLayout()
        budget_row.setContentsMargins(0, 0, 0, 0)
        budget_row.addWidget(self.budget_box, 1)
        budget_row.addWidget(self.budget_spin, 1)
        self.min_count_spin = QSpinBox(objectName="min_count_spin")
        self.min_count_spin.setRange(1, 1_000_000_000)
        self.min_count_spin.setToolTip("Stop when no pair occurs at least this many times")
        self.eow_box = QCheckBox(objectName="eow_box")
        self.eow_box.setToolTip("Append a marker to every chunk, as in the original BPE paper")
        self.eow_edit = QLineEdit("</w>", objectName="eow_edit")
        eow_row = QHBoxLayout()
        eow_row.setContentsMargins(0, 0, 0, 0)
        eow_row.addWidget(self.eow_box)
        eow_row.addWidget(self.eow_edit, 1)
        self.specials_edit = QLineEdit(objectName="specials_edit")
        self.specials_edit.setPlaceholderText("e.g. <|endoftext|> <|pad|>  (separate with spaces)")
        self.specials_edit.setToolTip("Special tokens get their own ids and are never merged")
        self.tie_break_box = _combo(TIE_CHOICES, "tie_break_box")
        self.tie_break_box.setToolTip(
            "Pairs with equal counts: the one seen first in the corpus wins, or the smallest pair in "
            "Hugging Face tokenizers' id order (then the merges equal its BpeTrainer's)")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Units:", self.units_box)
        form.addRow("&Pre-tokenization:", self.split_box)
        form.addRow("Pa&ttern:", self.pattern_edit)
        form.addRow("", self.pattern_error)
        form.addRow(_buddy_label("&Budget:", self.budget_box), budget_row)
        form.addRow("&Min pair count:", self.min_count_spin)
        form.addRow(_buddy_label("&End-of-word mark:", self.eow_box), eow_row)
        form.addRow("&Special tokens:", self.specials_edit)
        form.addRow(_buddy_label("Ties:", self.tie_break_box), self.tie_break_box)
        # algorithm choice: a row at the top, WordPiece / Unigram rows at the end
        self.algo = AlgorithmOptions(self)
        self.algorithm_box = self.algo.algorithm_box
        self.algo.add_rows(form, 0)
        self._form = form
        self.algo.changed.connect(self._on_control_changed)
        self.algorithm_box.activated.connect(self._on_algorithm_box_activated)

        self.message = QLabel(objectName="settings_message", wordWrap=True)
        self.message.hide()
        style = self.style()
        self.train_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay), "Train",
                                        objectName="train_button")
        self.train_button.setToolTip("Train a BPE tokenizer on the corpus (Ctrl+Return)")
        self.train_button.setDefault(True)
        self.cancel_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_MediaStop), "Cancel",
                                         objectName="cancel_button")
        self.cancel_button.setToolTip("Stop training (Esc)")
        self.cancel_button.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.train_button, 1)
        buttons.addWidget(self.cancel_button, 1)

        self.summary = QLabel("Not trained yet. Choose options and press Train.", objectName="summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        result = QGroupBox("Result", objectName="result_group")
        rl = QVBoxLayout(result)
        rl.addWidget(self.summary)

        self.form_box = QWidget(objectName="training_form")  # disabled as a whole for a loaded tokenizer
        self.form_box.setLayout(form)
        form.setContentsMargins(0, 0, 0, 0)
        self.loaded_note = QLabel(objectName="loaded_note", wordWrap=True)
        self.edit_settings_button = QPushButton("Edit settings to train a new tokenizer",
                                                objectName="edit_settings_button")
        self.edit_settings_button.clicked.connect(lambda: self.show_loaded(None))
        self.loaded_note.hide()
        self.edit_settings_button.hide()
        # the options scroll when the dock is short, Train and Cancel right under them, the result beside
        # (a third of the width: the form never spreads over a wide dock, and a short dock still shows it)
        options = QWidget(objectName="training_options")
        ol = QVBoxLayout(options)
        ol.setContentsMargins(0, 0, 4, 0)
        ol.addWidget(self.loaded_note)
        ol.addWidget(self.edit_settings_button)
        ol.addWidget(self.form_box)
        ol.addWidget(self.message)
        ol.addStretch(1)
        self.options_scroll = QScrollArea(objectName="training_scroll", widgetResizable=True)
        self.options_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.options_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.options_scroll.setWidget(options)
        left = QVBoxLayout()
        left.addWidget(self.options_scroll)  # as tall as the form, or less (it scrolls) in a short dock
        left.addLayout(buttons)
        left.addStretch(1)
        columns = QHBoxLayout(self)
        columns.setContentsMargins(8, 8, 8, 8)
        columns.addLayout(left, 2)
        columns.addWidget(result, 1)
        self.setFocusProxy(self.units_box)

        for box in (self.units_box, self.budget_box, self.tie_break_box):
            box.currentIndexChanged.connect(self._on_control_changed)
        self.split_box.currentIndexChanged.connect(self._on_split_box_changed)
        self.pattern_edit.textEdited.connect(self._on_pattern_edited)
        for spin in (self.budget_spin, self.min_count_spin):
            spin.valueChanged.connect(self._on_control_changed)
        self.eow_box.toggled.connect(self._on_control_changed)
        for edit in (self.eow_edit, self.specials_edit):
            edit.textChanged.connect(self._on_control_changed)
        self.train_button.clicked.connect(self.train_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)

    def _update_fonts(self) -> None:
        fm = self.fontMetrics()
        self.summary.setMinimumHeight(4 * fm.lineSpacing() + 4)  # room for the whole summary
        mono = monospace_font(self.font())
        for edit in (self.pattern_edit, self.eow_edit, self.specials_edit):
            edit.setFont(mono)

    # -- settings <-> controls --------------------------------------------------------------

    def _split_spec(self) -> str:
        key = self.split_box.currentData()
        return f"regex:{self.pattern_edit.text()}" if key == "custom" else key

    def settings(self, *, word_counts: bool = False):
        """The chosen algorithm's settings the controls describe; raises `TokvizError` saying
        what is wrong."""
        algo = self.algo
        budget, n = self.budget_box.currentData(), self.budget_spin.value()
        given = {"split": self._split_spec(), "special_tokens": tuple(self.specials_edit.text().split()),
                 **algo.own_values()}
        if algo.declares("merges"):
            given.update(vocab_size=n if budget == BUDGET_VOCAB else None, merges=n if budget == BUDGET_MERGES else None)
        elif budget == BUDGET_VOCAB:
            given["vocab_size"] = n
        else:
            raise SettingsError(f"{algo.spec.title} training needs a vocabulary size (it prunes down to it)")
        given[algo.panel_option("min_count")[0]] = self.min_count_spin.value()
        for dest, value in (("units", lambda: self.units_box.currentData()),
                            ("end_of_word", lambda: self.eow_edit.text() if self.eow_box.isChecked() else None),
                            ("tie_break", lambda: self.tie_break_box.currentData())):
            if algo.declares(dest):  # BPE's rows
                given[dest] = value()
        fields = algo.spec.settings_type.__dataclass_fields__
        if "word_counts" in fields:  # recorded with the timeline
            given["word_counts"] = word_counts
        s = algo.spec.settings_type(**given).validate()
        if given.get("units") == "bytes":
            merge_budget(s, 256)  # a vocabulary smaller than 256 + specials is impossible
        return s

    def set_settings(self, s: TrainSettings) -> None:
        """Show `s` in the controls."""
        widgets = (self.units_box, self.split_box, self.budget_box, self.budget_spin,
                   self.min_count_spin, self.eow_box, self.eow_edit, self.specials_edit, self.pattern_edit,
                   self.tie_break_box, *self.algo.widgets())
        for w in widgets:
            w.blockSignals(True)
        try:
            self.algo.show_settings(s)  # algorithm and its own options
            own = {dest: getattr(s, declared[0]) for dest in ("units", "merges", "min_count", "end_of_word", "tie_break")
                   if (declared := self.algo.panel_option(dest)) is not None}
            if "units" in own:
                self.units_box.setCurrentIndex(max(0, self.units_box.findData(own["units"])))
            if s.split.startswith("regex:"):
                self._custom_regex = s.split[len("regex:"):]
                self._custom_edited = True
                self.split_box.setCurrentIndex(self.split_box.findData("custom"))
            else:
                self.split_box.setCurrentIndex(max(0, self.split_box.findData(s.split)))
            if s.vocab_size is not None:
                self.budget_box.setCurrentIndex(self.budget_box.findData(BUDGET_VOCAB))
                self.budget_spin.setValue(s.vocab_size)
            elif own.get("merges") is not None:
                self.budget_box.setCurrentIndex(self.budget_box.findData(BUDGET_MERGES))
                self.budget_spin.setValue(max(1, own["merges"]))
            else:
                self.budget_box.setCurrentIndex(self.budget_box.findData(BUDGET_NONE))
            self.min_count_spin.setValue(own["min_count"])
            eow = own.get("end_of_word")
            self.eow_box.setChecked(eow is not None)
            if eow is not None:
                self.eow_edit.setText(eow)
            self.specials_edit.setText(" ".join(s.special_tokens))
            self.tie_break_box.setCurrentIndex(max(0, self.tie_break_box.findData(own.get("tie_break", "first"))))
        finally:
            for w in widgets:
                w.blockSignals(False)
        self._show_pattern()
        self._on_control_changed()

    def _show_pattern(self) -> None:
        key = self.split_box.currentData()
        custom = key == "custom"
        self.pattern_edit.setReadOnly(not custom)
        if custom:
            self.pattern_edit.setText(self._custom_regex)
            self.pattern_edit.setToolTip("Each match of this regular expression becomes one chunk")
        else:
            pattern = SPLIT_PRESETS.get(key)
            self.pattern_edit.setText(pattern if pattern is not None and key != "whitespace" else "")
            self.pattern_edit.setPlaceholderText(
                "(split at whitespace, like str.split())" if key == "whitespace"
                else "(no pattern: the whole text is one chunk)"
            )
            self.pattern_edit.setToolTip("The preset's pattern (choose Custom to edit it)")
        self.pattern_edit.setCursorPosition(0)

    # -- algorithm: BPE-only rows hidden, WordPiece / Unigram rows shown -----------

    def _row_of(self, widget: QWidget) -> int:
        """Form row whose field is `widget` or a layout holding it (-1: none)."""
        form = self._form
        for r in range(form.rowCount()):
            item = form.itemAt(r, QFormLayout.ItemRole.FieldRole)
            if item is None:
                continue
            if item.widget() is widget or (item.layout() is not None and item.layout().indexOf(widget) >= 0):
                return r
        return -1

    def _update_algorithm_rows(self) -> None:
        algo = self.algo
        for dest, w in (("units", self.units_box), ("end_of_word", self.eow_box), ("tie_break", self.tie_break_box)):
            row = self._row_of(w)
            if row >= 0:
                self._form.setRowVisible(row, algo.declares(dest))
        algo.update_rows()
        _, min_count = algo.panel_option("min_count")
        label = self._form.labelForField(self.min_count_spin)
        if label is not None:
            label.setText(min_count.label)
        self.min_count_spin.setToolTip(min_count.tooltip)
        fixed_budget = not algo.declares("merges")
        if fixed_budget and self.budget_box.currentData() != BUDGET_VOCAB:
            self.budget_box.blockSignals(True)
            self.budget_box.setCurrentIndex(self.budget_box.findData(BUDGET_VOCAB))
            self.budget_box.blockSignals(False)
        self.budget_box.setEnabled(not fixed_budget)  # Unigram prunes down to a vocabulary size
        self.train_button.setToolTip(f"Train a {self.algorithm_box.currentText()} tokenizer on the corpus "
                                     f"(Ctrl+Return)")

    @Slot(int)
    def _on_algorithm_box_activated(self, _index: int) -> None:
        """The user picked an algorithm: WordPiece and Unigram work on words, so a GPT-style
        split (which keeps the leading space in every chunk) becomes a whitespace split."""
        if self.algo.works_on_words() and self.split_box.currentData() in GPT_SPLITS:
            self.split_box.setCurrentIndex(self.split_box.findData(NON_BPE_SPLIT))

    # -- validation -------------------------------------------------------------------------

    @Slot()
    def _on_split_box_changed(self) -> None:
        if self.split_box.currentData() == "custom" and not self._custom_edited:
            shown = self.pattern_edit.text()  # the preset's pattern: a good place to start editing
            if shown:
                self._custom_regex = shown
        self._show_pattern()
        self._on_control_changed()

    @Slot(str)
    def _on_pattern_edited(self, text: str) -> None:
        if self.split_box.currentData() == "custom":
            self._custom_regex = text
            self._custom_edited = True
        self._on_control_changed()

    @Slot()
    def _on_control_changed(self) -> None:
        self._update_algorithm_rows()
        self.budget_spin.setEnabled(self.budget_box.currentData() != BUDGET_NONE)
        self.eow_edit.setEnabled(self.eow_box.isChecked())
        self._update_validation()
        self.settings_changed.emit()

    def _update_validation(self) -> None:
        pattern_error = None
        if self.split_box.currentData() == "custom":
            try:
                parse_split(self._split_spec())
            except TokvizError as exc:
                pattern_error = str(exc)
        self._set_error_label(self.pattern_error, pattern_error)
        message = None
        if pattern_error is None:
            try:
                self.settings()
            except TokvizError as exc:
                message = str(exc)
        self._set_error_label(self.message, message)
        valid = pattern_error is None and message is None
        if valid != self._valid:
            self._valid = valid
            self.validity_changed.emit()
        self._update_buttons()

    def _set_error_label(self, label: QLabel, text: str | None) -> None:
        label.setVisible(bool(text))
        if text:
            show_error_text(label, text[:1].upper() + text[1:], self.palette())

    @property
    def is_valid(self) -> bool:
        return self._valid

    @property
    def validation_message(self) -> str:
        """The current problem with the settings, or ``""``."""
        for label in (self.pattern_error, self.message):
            if not label.isHidden():
                return label.text()
        return ""

    # -- running state and results ----------------------------------------------------------

    def set_running(self, running: bool) -> None:
        self._running = running
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.train_button.setEnabled(self._valid)
        self.train_button.setText("Restart" if self._running else "Train")
        self.cancel_button.setEnabled(self._running)

    def show_loaded(self, name: str | None) -> None:
        """A loaded tokenizer `name` is current: its settings did not come from this form, so the
        form is disabled with a note saying so (None: the form applies again)."""
        loaded = name is not None
        self.loaded_note.setText(f"{name} is a loaded tokenizer: these training settings do not apply to it. "
                                 "They are kept for training a new tokenizer on the corpus." if loaded else "")
        self.loaded_note.setVisible(loaded)
        self.edit_settings_button.setVisible(loaded)
        self.form_box.setEnabled(not loaded)
        self.form_box.setToolTip("A loaded tokenizer: training settings do not apply (press “Edit settings to "
                                 "train a new tokenizer”)" if loaded else "")

    def show_summary(self, timeline: Timeline | None, *, status: str = "") -> None:
        """Describe a trained (or partly trained) timeline."""
        self.show_loaded(timeline.settings.name if timeline is not None and not timeline.has_counts else None)
        if timeline is None:
            self.summary.setText(status or "Not trained yet. Choose options and press Train.")
            return
        self.summary.setText("\n".join(([status] if status else []) + timeline.describe()))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange and hasattr(self, "message"):
            self._update_validation()

