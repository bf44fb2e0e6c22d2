"""The algorithm choice of the training panel and the options only WordPiece or Unigram have.

`AlgorithmOptions` holds the algorithm combo (BPE / WordPiece / Unigram) and the extra controls:
WordPiece's maximum word length; Unigram's seed size, prune fraction and EM iterations per round
(`tokviz.core.UnigramSettings`). `build_settings` turns the shared controls' values plus these
into the settings object of the chosen algorithm; `TrainingPanel` shows or hides its BPE-only
rows (units, end-of-word mark, tie-break) with `BPE_ONLY` in mind.

What this leaves out: the shared controls (split, budget, min count, specials: the panel).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from tokviz.core.algorithm.registry import ALGORITHM_TITLES, ALGORITHMS, algorithm_of
from tokviz.core.errors import SettingsError
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

ALGORITHM_TIPS = {
    "bpe": "Byte-pair encoding: merge the most frequent pair, step after step",
    "wordpiece": "WordPiece (BERT): merge the pair with the best count(ab) / (count(a) · count(b)); "
                 "continuation pieces start with ##",
    "unigram": "Unigram (SentencePiece): start from many substrings, run EM and prune the pieces "
               "that cost least, round after round",
}
NON_BPE_SPLIT = "whitespace"  # what picking WordPiece or Unigram switches a GPT-style split to
GPT_SPLITS = ("gpt4", "gpt2", "o200k")


class AlgorithmOptions(QObject):
    """Algorithm combo + algorithm-specific rows, added to the panel's form by `add_rows`."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)  # a holder: its controls live in the panel's form
        self.algorithm_box = QComboBox(objectName="algorithm_box")
        for key in ALGORITHMS:
            self.algorithm_box.addItem(ALGORITHM_TITLES[key], key)
            self.algorithm_box.setItemData(self.algorithm_box.count() - 1, ALGORITHM_TIPS[key], Qt.ItemDataRole.ToolTipRole)
        self.algorithm_box.setToolTip("Which subword algorithm to train")
        d_wp, d_un = WordPieceSettings(), UnigramSettings()
        self.max_word_spin = QSpinBox(objectName="max_word_spin")
        self.max_word_spin.setRange(1, 100_000)
        self.max_word_spin.setValue(d_wp.max_word_chars)
        self.max_word_spin.setToolTip("Words longer than this many characters become [UNK] (BERT: 100)")
        self.seed_spin = QSpinBox(objectName="seed_size_spin")
        self.seed_spin.setRange(0, 10_000_000)
        self.seed_spin.setSpecialValueText("Auto (10× the target)")
        self.seed_spin.setGroupSeparatorShown(True)
        self.seed_spin.setToolTip("How many frequent substrings the seed vocabulary starts from")
        self.prune_spin = QDoubleSpinBox(objectName="prune_spin")
        self.prune_spin.setRange(0.01, 0.99)
        self.prune_spin.setSingleStep(0.05)
        self.prune_spin.setValue(d_un.prune_fraction)
        self.prune_spin.setToolTip("Fraction of the pieces each round removes (those that cost least)")
        self.em_spin = QSpinBox(objectName="em_spin")
        self.em_spin.setRange(1, 100)
        self.em_spin.setValue(d_un.em_iterations)
        self.em_spin.setToolTip("EM iterations (expected counts, then new probabilities) per round")
        self.algorithm_box.currentIndexChanged.connect(self.changed)
        for w in (self.max_word_spin, self.seed_spin, self.em_spin):
            w.valueChanged.connect(self.changed)
        self.prune_spin.valueChanged.connect(self.changed)

    def add_rows(self, form: QFormLayout, at: int) -> None:
        """Put the algorithm row at `at` and the specific rows at the end of `form`."""
        form.insertRow(at, "&Algorithm:", self.algorithm_box)
        form.addRow("Max &word length:", self.max_word_spin)
        form.addRow("Seed si&ze:", self.seed_spin)
        form.addRow("P&rune per round:", self.prune_spin)
        form.addRow("EM &iterations:", self.em_spin)
        self._form = form

    @property
    def algorithm(self) -> str:
        return self.algorithm_box.currentData()

    def update_rows(self) -> None:
        """Show only the rows of the chosen algorithm."""
        a = self.algorithm
        form = self._form
        form.setRowVisible(self.max_word_spin, a == "wordpiece")
        for w in (self.seed_spin, self.prune_spin, self.em_spin):
            form.setRowVisible(w, a == "unigram")

    def widgets(self) -> tuple[QWidget, ...]:
        return (self.algorithm_box, self.max_word_spin, self.seed_spin, self.prune_spin, self.em_spin)

    def show_settings(self, s) -> None:
        """Show the algorithm (and its own options) of settings `s` (signals blocked by the caller)."""
        a = algorithm_of(s)
        self.algorithm_box.setCurrentIndex(max(0, self.algorithm_box.findData(a)))
        if a == "wordpiece":
            self.max_word_spin.setValue(s.max_word_chars)
        elif a == "unigram":
            self.seed_spin.setValue(s.seed_size or 0)
            self.prune_spin.setValue(s.prune_fraction)
            self.em_spin.setValue(s.em_iterations)

    def build_settings(self, *, split: str, budget: str, n: int, min_count: int, specials: tuple[str, ...]):
        """WordPiece or Unigram settings from the shared controls (`budget`: vocab_size, merges, none)."""
        if self.algorithm == "wordpiece":
            return WordPieceSettings(
                vocab_size=n if budget == "vocab_size" else None,
                merges=n if budget == "merges" else None,
                split=split, min_count=min_count, special_tokens=specials,
                max_word_chars=self.max_word_spin.value(),
            ).validate()
        if budget != "vocab_size":
            raise SettingsError("Unigram training needs a vocabulary size (it prunes down to it)")
        return UnigramSettings(
            vocab_size=n, split=split, seed_size=self.seed_spin.value() or None, seed_min_count=min_count,
            prune_fraction=round(self.prune_spin.value(), 4), em_iterations=self.em_spin.value(),
            special_tokens=specials,
        ).validate()


def summary_text(timeline, status: str = "") -> str:
    """The training panel's result summary of a WordPiece or Unigram timeline."""
    lines = [status] if status else []
    if timeline.algorithm == "wordpiece":
        n, base = timeline.n_merges, timeline.base_size
        lines.append(f"WordPiece · {n:,} merges · vocabulary {timeline.vocab_size:,} tokens "
                     f"({base:,} base + {n:,} merged + {timeline.n_special} special)")
    else:
        r = timeline.rounds[-1] if timeline.rounds else None
        pieces = r.n_pieces if r else 0
        lines.append(f"Unigram · {timeline.n_rounds:,} rounds · vocabulary {timeline.vocab_size:,} tokens "
                     f"({timeline.seed_size:,} seed pieces → {pieces:,})")
        if r is not None:
            lines.append(f"Log-likelihood {r.log_likelihood:,.0f}")
    before, after = timeline.corpus_length, timeline.length_at(timeline.n_steps)
    if before and after:
        lines.append(f"Corpus: {before:,} characters → {after:,} tokens ({before / after:.2f} chars/token)")
    lines.append(f"{timeline.n_chunks:,} distinct words")
    return "\n".join(lines)
