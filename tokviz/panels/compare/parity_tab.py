"""`ParityTab`: the first text on which two tokenizers of the list give different ids
(`tokviz.core.parity`): the corpus's lines first, then generated texts, shrunk to a minimal
text, with the first pipeline stage that differs and both Why traces. Runs on a background
thread with progress and Cancel, as ``tokviz diff`` does on the command line."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QLabel, QPlainTextEdit, QSpinBox, QWidget

from tokviz.core.parity import Side, find_difference, report_lines

from ..base import monospace_font
from ..widgets import STRETCH, hbox, vbox
from .tab import CompareTab

DEFAULT_FUZZ = 1000
MAX_FUZZ = 10_000_000


def parity_search(spec_a, spec_b, corpus: str, fuzz: int, seed: int, ignore: tuple[str, ...], *,
                  should_stop, progress):
    """Open both models (on the worker thread) and search: the corpus's lines, then `fuzz` texts."""
    progress("Opening the tokenizers…", 0.0)
    sides = [Side(s.label, s.open(), s.step) for s in (spec_a, spec_b)]
    lines = corpus.splitlines()
    return find_difference(*sides, lines=lines, fuzz=fuzz, seed=seed, ignore=ignore,
                           should_stop=should_stop, progress=progress)


class ParityTab(CompareTab):
    RUN_TEXT = "Find difference"
    N_MODELS = 2
    HINT = ("Pick two tokenizers (or one at two steps): the first text they encode differently, "
            "shrunk to a minimal one, and the stage where they part.")

    def __init__(self, specs: list, corpus_text, parent: QWidget | None = None) -> None:
        super().__init__("compare_parity", specs, parent)
        self.corpus_text = corpus_text  # () -> str
        self.use_corpus = QCheckBox("Corpus lines first", objectName="compare_parity_corpus", checked=True)
        self.fuzz = QSpinBox(objectName="compare_parity_fuzz", minimum=0, maximum=MAX_FUZZ, value=DEFAULT_FUZZ)
        self.fuzz.setToolTip("Generated texts to check after the corpus: scripts, whitespace, digits, "
                             "punctuation, special tokens, mixed, random")
        self.seed = QSpinBox(objectName="compare_parity_seed", minimum=0, maximum=2**31 - 1)
        self.ignore_bos = QCheckBox("Ignore BOS/EOS", objectName="compare_parity_ignore_bos")
        self.ignore_bos.setToolTip("Compare only the ids of the text, not the tokens a post-processor adds")
        self.report = QPlainTextEdit(objectName="compare_parity_report", readOnly=True)
        options = (self.use_corpus, QLabel("Generated:"), self.fuzz, QLabel("Seed:"), self.seed, self.ignore_bos)
        vbox(self, self.controls(), hbox(*options, STRETCH), self.progress, self.status, (self.report, 1),
             margins=0, spacing=4)
        self.report.setFont(monospace_font(self.font()))

    def job(self, picked):
        corpus = ""
        if self.use_corpus.isChecked():
            corpus = self.read_text(self.corpus_text, "its lines are checked first")
            if corpus is None:
                return None
        if not corpus and not self.fuzz.value():
            self.status.setText("Nothing to check: use the corpus's lines or generate some texts.")
            return None
        ignore = ("bos_eos",) if self.ignore_bos.isChecked() else ()
        return (parity_search, picked[0], picked[1], corpus, self.fuzz.value(), self.seed.value(), ignore)

    def show_result(self, result) -> str:
        self.report.setPlainText("\n".join(report_lines(result)))
        d = result.difference
        if d is None:
            return f"No difference in {result.checked:,} texts."
        return f"First difference after {result.checked:,} texts: {d.stage} ({len(d.text)} characters)."
