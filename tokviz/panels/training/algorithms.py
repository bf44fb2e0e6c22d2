"""The algorithm choice of the training panel and the rows of the options only some algorithms have.

`AlgorithmOptions` holds the algorithm combo (every algorithm of the registry, with its tip) and
one control per setting an algorithm declares as its own row (`tokviz.core.algorithm.options`:
WordPiece's maximum word length; Unigram's seed size, prune fraction and EM iterations), made
from the declaration: a spin box with its range, or a combo box of its choices. Only the chosen
algorithm's rows are shown, and `own_values` reads them back by field name; `TrainingPanel` asks
`declares` and `panel_option` instead of comparing algorithm names.

What this leaves out: the rows the panel draws itself (split, budget, min count, specials, and
BPE's units, end-of-word mark and tie-break), whose labels and help come from the same declarations.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from tokviz.core.algorithm.options import Option, option_named, options_of
from tokviz.core.registry import SPECS, AlgorithmSpec, algorithm_of

GPT_SPLITS = ("gpt4", "gpt2", "o200k")  # splits that keep the leading space in every chunk


def own_options() -> dict[str, Option]:
    """Every own-row setting of every algorithm by CLI attribute (the first declaration)."""
    found: dict[str, Option] = {}
    for spec in SPECS.values():
        for _, o in options_of(spec.settings_type):
            if o.row == "own":
                found.setdefault(o.dest, o)
    return found


def make_control(o: Option, name: str) -> QWidget:
    """The form control a declaration asks for, with its range, steps and tooltip."""
    if o.kind == "choice":
        control: QWidget = QComboBox(objectName=name)
        for choice in o.choices:
            control.addItem(choice, choice)
    elif o.kind == "float":
        control = QDoubleSpinBox(objectName=name)
        control.setRange(o.low if o.low is not None else 0.0, o.high if o.high is not None else 1e9)
        if o.step is not None:
            control.setSingleStep(o.step)
    else:
        control = QSpinBox(objectName=name)
        control.setRange(int(o.low if o.low is not None else 0), int(o.high if o.high is not None else 2**31 - 1))
        control.setGroupSeparatorShown(control.maximum() >= 10_000)
        if o.none_text is not None:
            control.setSpecialValueText(o.none_text)
    control.setToolTip(o.tooltip)
    return control


def control_value(control: QWidget, o: Option):
    """The value a control shows (None for its "not set" text)."""
    if isinstance(control, QComboBox):
        return control.currentData()
    if isinstance(control, QDoubleSpinBox):
        return round(control.value(), 4)
    value = control.value()
    return None if o.none_text is not None and value == control.minimum() else value


def show_value(control: QWidget, value) -> None:
    """Show `value` (None: the control's "not set" text) in a control of `make_control`."""
    if isinstance(control, QComboBox):
        control.setCurrentIndex(max(0, control.findData(value)))
    else:
        control.setValue(control.minimum() if value is None else value)


class AlgorithmOptions(QObject):
    """Algorithm combo + the algorithms' own rows, added to the panel's form by `add_rows`."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)  # a holder: its controls live in the panel's form
        self.algorithm_box = QComboBox(objectName="algorithm_box")
        for key, spec in SPECS.items():
            self.algorithm_box.addItem(spec.title, key)
            self.algorithm_box.setItemData(self.algorithm_box.count() - 1, spec.tip, Qt.ItemDataRole.ToolTipRole)
        self.algorithm_box.setToolTip("Which subword algorithm to train")
        self.algorithm_box.currentIndexChanged.connect(self.changed)
        self._options = own_options()
        self.controls: dict[str, QWidget] = {dest: make_control(o, f"{dest}_control")
                                             for dest, o in self._options.items()}
        for dest, control in self.controls.items():
            show_value(control, self._default_of(dest))
            signal = control.currentIndexChanged if isinstance(control, QComboBox) else control.valueChanged
            signal.connect(self.changed)

    def _default_of(self, dest: str):
        """The default of the first algorithm declaring `dest`."""
        for spec in SPECS.values():
            declared = option_named(spec.settings_type, dest)
            if declared is not None:
                return spec.settings_type.__dataclass_fields__[declared[0]].default
        return None

    def add_rows(self, form: QFormLayout, at: int) -> None:
        """Put the algorithm row at `at` and the own rows at the end of `form`."""
        form.insertRow(at, "&Algorithm:", self.algorithm_box)
        for dest, control in self.controls.items():
            form.addRow(self._options[dest].label, control)
        self._form = form

    @property
    def algorithm(self) -> str:
        return self.algorithm_box.currentData()

    @property
    def spec(self) -> AlgorithmSpec:
        """The chosen algorithm's registry entry."""
        return SPECS[self.algorithm]

    def control(self, dest: str) -> QWidget:
        """The own-row control of the setting behind CLI attribute `dest` (``"seed_size"``)."""
        return self.controls[dest]

    def declares(self, dest: str) -> bool:
        """Does the chosen algorithm have the setting behind CLI attribute `dest`?"""
        return option_named(self.spec.settings_type, dest) is not None

    def panel_option(self, dest: str) -> tuple[str, Option] | None:
        """(field name, declaration) of the chosen algorithm's setting behind `dest`, else None."""
        return option_named(self.spec.settings_type, dest)

    def works_on_words(self) -> bool:
        """Does the chosen algorithm split on whitespace by default (a GPT-style split, which
        keeps the leading space in every chunk, does not suit it)?"""
        split = self.spec.settings_type.__dataclass_fields__.get("split")
        return split is not None and split.default not in GPT_SPLITS

    def update_rows(self) -> None:
        """Show only the rows of the chosen algorithm."""
        for dest, control in self.controls.items():
            self._form.setRowVisible(control, self.declares(dest))

    def widgets(self) -> tuple[QWidget, ...]:
        return (self.algorithm_box, *self.controls.values())

    def show_settings(self, s) -> None:
        """Show the algorithm (and its own options) of settings `s` (signals blocked by the caller)."""
        self.algorithm_box.setCurrentIndex(max(0, self.algorithm_box.findData(algorithm_of(s))))
        for dest, control in self.controls.items():
            declared = option_named(type(s), dest)
            if declared is not None:
                show_value(control, getattr(s, declared[0]))

    def own_values(self) -> dict[str, object]:
        """The chosen algorithm's own-row settings as ``{field name: value}``."""
        values = {}
        for dest, control in self.controls.items():
            declared = self.panel_option(dest)
            if declared is not None:
                values[declared[0]] = control_value(control, declared[1])
        return values
