"""`PremiumChart`: the Compare panel's premiums, by language or by script, one colour per model.

A premium is a document's tokens over the reference document's (the same text in the reference
language). "By language" draws each model's premiums sorted cheapest first (`LanguagePlot`); "By
script" the median and spread per dominant script (`ScriptPlot`). Models are named as in the
tables (`tokviz.core.compare.report.short_labels`: a folder for its ``tokenizer.json``) and keep
their colour of the model list. `set_comparison` may be called again and again while documents
arrive: it redraws the view on screen in place, the other when it is chosen. `hovered(text)`
describes the language or script under the mouse. What this leaves out: measuring (core) and the
tables (`tokviz.engine.tables.compare_models`).
"""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QLabel, QScrollArea, QSizePolicy, QStackedWidget, QWidget

from tokviz.core.compare import Comparison, ModelResult
from tokviz.core.compare.report import short_labels

from ..widgets import hbox, save_image, vbox
from .language_plot import LanguagePlot
from .plots import model_color
from .script_plot import ScriptPlot

VIEWS = (("languages", "By language"), ("scripts", "By script"))


class PremiumChart(QWidget):
    """The premiums of a comparison by language or by script; `hovered(text)` on the mouse."""

    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_chart")
        self.setMinimumHeight(160)
        self.view_box = QComboBox(objectName="compare_chart_view")
        for key, text in VIEWS:
            self.view_box.addItem(text, key)
        self.view_box.setToolTip("Each model's premiums sorted per language, or their median and spread per script")
        self.caption = QLabel("", objectName="compare_chart_caption")
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.languages = LanguagePlot()
        self.scripts = ScriptPlot()
        self.script_scroll = QScrollArea(objectName="compare_chart_scripts_scroll", widgetResizable=True)
        self.script_scroll.setWidget(self.scripts)
        self.script_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.languages)
        self.stack.addWidget(self.script_scroll)
        for plot in (self.languages, self.scripts):
            plot.hovered.connect(self.hovered)
        self.view_box.currentIndexChanged.connect(self._on_view_box_changed)
        vbox(self, hbox(self.view_box, (self.caption, 1), margins=0), (self.stack, 1), margins=0, spacing=2)
        self.comparison: Comparison | None = None
        self.labels: list[str] = []
        self._drawn: dict[str, int] = {}  # view -> id of the comparison it shows

    @property
    def view(self) -> str:
        return self.view_box.currentData()

    def set_view(self, key: str) -> None:
        """Show ``"languages"`` or ``"scripts"``."""
        self.view_box.setCurrentIndex(self.view_box.findData(key))

    def set_comparison(self, c: Comparison | None) -> None:
        self.comparison = c
        self._drawn.clear()
        ok = self._charted()
        self.labels = short_labels([r.model for _, r in ok])
        if c is None or not ok:
            self.caption.setText("Run by document to chart each language's premium." if c is not None else "")
        else:
            ref = c.documents[c.reference].title if c.reference is not None and c.documents else "the reference"
            self.caption.setText(f"premium = tokens / tokens of “{ref}”")
            self.caption.setToolTip(self.caption.text())
        self._draw()

    def _draw(self) -> None:
        c, view = self.comparison, self.view
        if self._drawn.get(view) == id(c):
            return
        self._drawn[view] = id(c)
        ok = self._charted()
        plot = self.languages if view == "languages" else self.scripts
        plot.set_results(c, [r for _, r in ok], self.labels, [k for k, _ in ok])
        if plot.log:
            self.caption.setText(self.caption.text().split(" · ")[0] + " · log scale")

    def _charted(self) -> list[tuple[int, ModelResult]]:
        """(position in the model list, result) of each model with premiums (measured, or arriving)."""
        c = self.comparison
        return [(k, r) for k, r in enumerate(c.results) if r.error is None and r.premiums] if c is not None else []

    @Slot(int)
    def _on_view_box_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        self._draw()
        self.hovered.emit("")

    def describe(self, doc: int) -> str:
        """Document `doc` (an index) with every model's premium, as hovering its dot says."""
        return self.languages.describe(doc)

    def export_png(self, path: str) -> bool:
        """The view on screen (the whole of the script rows, scrolled or not) as a PNG."""
        plot = self.languages if self.view == "languages" else self.scripts
        return save_image(plot.grab(), path)

    def swatch_color(self, k: int) -> str:
        """Model `k`'s colour in the model list (the plots draw it lighter or darker to stand out)."""
        return model_color(k)
