"""BPE's settings: every option of a training run, declared once (`tokviz.core.algorithm.options`)
for the command line, the training panel and model files, and the model files' format name.

They live apart from the trainer so that the command line's help and the window's training forms,
which list every algorithm's options, and the registry, which names every format, load no trainer
and no numpy. What this leaves out: the training run and its timeline (`tokviz.core.bpe.timeline`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.core.algorithm.options import option
from tokviz.core.algorithm.staged import (
    MERGES,
    MIN_PAIR_COUNT,
    SPECIAL_TOKENS,
    SPLIT,
    VOCAB_SIZE,
    JsonSettings,
    check_budget,
    check_special_tokens,
)
from tokviz.core.errors import SettingsError
from tokviz.core.text.split import parse_split

from .units import UNITS

FORMAT_NAME = "tokviz-model"  # the "format" header of a BPE model file (`tokviz.core.bpe.model_file`)

# "first": equal counts go to the pair seen first; "hf": to the smallest (left, right) pair in
# Hugging Face tokenizers' id order, which reproduces its BpeTrainer's merge list exactly.
TIE_BREAKS = ("first", "hf")


@dataclass(frozen=True)
class TrainSettings(JsonSettings):
    """Every option of a training run. `vocab_size` counts base + merges + special tokens."""

    units: str = option("bytes", flag="--units", label="&Units:", kind="choice", choices=UNITS, row="panel",
                        help="what BPE starts from: the 256 byte values, or the corpus's characters")
    split: str = option("gpt4", **SPLIT)
    end_of_word: str | None = option(None, flag="--end-of-word", label="&End-of-word mark:", kind="str",
                                     metavar="MARK", row="panel",
                                     help="append a marker to every chunk, as in the original BPE paper")
    vocab_size: int | None = option(None, **VOCAB_SIZE)
    merges: int | None = option(None, **MERGES)
    min_count: int = option(2, **MIN_PAIR_COUNT)
    special_tokens: tuple[str, ...] = option((), **SPECIAL_TOKENS)
    word_counts: bool = False
    tie_break: str = option("first", flag="--tie-break", label="Ties:", kind="choice", choices=TIE_BREAKS, row="panel",
                            help="equal counts: first (pair seen first) or hf (Hugging Face's BpeTrainer order)")

    def validate(self) -> TrainSettings:
        """Raise `SettingsError` / `SplitError` for settings that cannot work; return self."""
        if self.units not in UNITS:
            raise SettingsError(f"unknown units {self.units!r}; choose bytes or chars")
        parse_split(self.split)
        check_budget(self.vocab_size, self.merges, self.min_count)
        if self.end_of_word == "":
            raise SettingsError("the end-of-word marker cannot be empty")
        check_special_tokens(self.special_tokens)
        if self.tie_break not in TIE_BREAKS:
            raise SettingsError(f"unknown tie-break {self.tie_break!r}; choose {', '.join(TIE_BREAKS)}")
        if self.tie_break == "hf" and self.end_of_word is not None:
            raise SettingsError(
                "tie-break hf has no end-of-word marker (Hugging Face's end_of_word_suffix works "
                "differently); remove the marker or use tie-break first"
            )
        return self
