"""The algorithm choice of the training panel and the options only WordPiece or Unigram have.

`AlgorithmOptions` holds the algorithm combo (BPE / WordPiece / Unigram) and the extra controls:
WordPiece's maximum word length; Unigram's seed size, prune fraction and EM iterations per round
(`tokviz.core.UnigramSettings`). `FORMS` says, per algorithm (by the registry's names), which rows
the form shows, how the shared rows read, and how the controls become that algorithm's settings;
`TrainingPanel` reads the chosen `AlgorithmForm` instead of comparing names.

What this leaves out: the shared controls (split, budget, min count, specials: the panel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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

    @property
    def form(self) -> AlgorithmForm:
        """What the chosen algorithm's form looks like and how it builds settings."""
        return FORMS[self.algorithm]

    def update_rows(self) -> None:
        """Show only the rows of the chosen algorithm."""
        own = self.form.own_rows
        for name in OWN_ROWS:
            self._form.setRowVisible(getattr(self, name), name in own)

    def widgets(self) -> tuple[QWidget, ...]:
        return (self.algorithm_box, *(getattr(self, name) for name in OWN_ROWS))

    def show_settings(self, s) -> None:
        """Show the algorithm (and its own options) of settings `s` (signals blocked by the caller)."""
        self.algorithm_box.setCurrentIndex(max(0, self.algorithm_box.findData(algorithm_of(s))))
        self.form.show(self, s)

    def build_settings(self, *, split: str, budget: str, n: int, min_count: int, specials: tuple[str, ...]):
        """The chosen algorithm's settings from the shared controls (`budget`: vocab_size, merges,
        none), for algorithms whose form builds them here (`form.build`)."""
        return self.form.build(self, split, budget, n, min_count, specials).validate()


def _show_nothing(options: AlgorithmOptions, s) -> None:
    pass


def _show_wordpiece(options: AlgorithmOptions, s: WordPieceSettings) -> None:
    options.max_word_spin.setValue(s.max_word_chars)


def _show_unigram(options: AlgorithmOptions, s: UnigramSettings) -> None:
    options.seed_spin.setValue(s.seed_size or 0)
    options.prune_spin.setValue(s.prune_fraction)
    options.em_spin.setValue(s.em_iterations)


def _wordpiece_settings(options: AlgorithmOptions, split, budget, n, min_count, specials) -> WordPieceSettings:
    return WordPieceSettings(
        vocab_size=n if budget == "vocab_size" else None,
        merges=n if budget == "merges" else None,
        split=split, min_count=min_count, special_tokens=specials,
        max_word_chars=options.max_word_spin.value(),
    )


def _unigram_settings(options: AlgorithmOptions, split, budget, n, min_count, specials) -> UnigramSettings:
    if budget != "vocab_size":
        raise SettingsError("Unigram training needs a vocabulary size (it prunes down to it)")
    return UnigramSettings(
        vocab_size=n, split=split, seed_size=options.seed_spin.value() or None, seed_min_count=min_count,
        prune_fraction=round(options.prune_spin.value(), 4), em_iterations=options.em_spin.value(),
        special_tokens=specials,
    )


@dataclass(frozen=True)
class AlgorithmForm:
    """How the training form looks for one algorithm and how it turns controls into settings."""

    own_rows: tuple[str, ...]  # attributes of `AlgorithmOptions` shown for this algorithm
    bpe_rows: bool  # units, end-of-word mark and tie-break apply
    works_on_words: bool  # a GPT-style split (leading space in every chunk) becomes a whitespace split
    min_count_label: str
    min_count_tip: str
    show: Callable[[AlgorithmOptions, object], None]
    build: Callable | None  # None: the panel builds the settings from its BPE rows
    vocab_size_only: bool = False  # the budget is always a vocabulary size (Unigram prunes down to it)


OWN_ROWS = ("max_word_spin", "seed_spin", "prune_spin", "em_spin")
_PAIR_COUNT = ("&Min pair count:", "Stop when no pair occurs at least this many times")
FORMS = {  # the training panel's per-algorithm table, keyed by the registry's names
    "bpe": AlgorithmForm((), True, False, *_PAIR_COUNT, _show_nothing, None),
    "wordpiece": AlgorithmForm(("max_word_spin",), False, True, *_PAIR_COUNT, _show_wordpiece, _wordpiece_settings),
    "unigram": AlgorithmForm(("seed_spin", "prune_spin", "em_spin"), False, True, "&Min seed count:",
                             "Substrings seen fewer times never enter the seed vocabulary", _show_unigram,
                             _unigram_settings, vocab_size_only=True),
}
