"""Parity-aware BPE's settings: every option of a training run, declared once
(`tokviz.core.algorithm.options`) for the command line, the training panel and model files, and
the model files' format name.

Kept apart from the trainer, as every algorithm's are (`tokviz.core.bpe.settings` says why). What
this leaves out: the training run and its timeline (`tokviz.core.parity_bpe.timeline`).
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
from tokviz.core.bpe.units import UNITS
from tokviz.core.errors import SettingsError
from tokviz.core.text.split import parse_split

FORMAT_NAME = "tokviz-parity-bpe"  # the "format" header of a parity-aware model file


@dataclass(frozen=True)
class ParitySettings(JsonSettings):
    """Every option of a parity-aware run. `vocab_size` counts base + merges + special tokens."""

    units: str = option("bytes", flag="--units", label="&Units:", kind="choice", choices=UNITS, row="panel",
                        help="what BPE starts from: the 256 byte values, or the corpus's characters")
    split: str = option("gpt4", **SPLIT)
    vocab_size: int | None = option(None, **VOCAB_SIZE)
    merges: int | None = option(None, **MERGES)
    min_count: int = option(2, **MIN_PAIR_COUNT)
    special_tokens: tuple[str, ...] = option((), **SPECIAL_TOKENS)
    hybrid: int = option(0, flag="--hybrid", label="&Global merges first:", low=0, high=1_000_000_000, metavar="M",
                         help="the hybrid variant: make the first M merges as plain BPE does (most frequent "
                              "pair of all documents together), then serve the costliest language")
    parallel: str | None = option(None, flag="--parallel", label="Parallel corpus:", kind="str", metavar="FILE",
                                  row="panel", unset="the training text",
                                  help="a multi-parallel corpus to train on, one document per language, split "
                                       "as tokviz compare --by-document splits it")
    # what the BPE views read of a BPE run's settings: parity-aware runs have neither
    end_of_word = None
    tie_break = "first"

    def validate(self) -> ParitySettings:
        """Raise `SettingsError` / `SplitError` for settings that cannot work; return self."""
        if self.units not in UNITS:
            raise SettingsError(f"unknown units {self.units!r}; choose bytes or chars")
        parse_split(self.split)
        check_budget(self.vocab_size, self.merges, self.min_count)
        if not isinstance(self.hybrid, int) or self.hybrid < 0:
            raise SettingsError(f"the number of global merges (--hybrid) cannot be negative, got {self.hybrid}")
        if self.parallel == "":
            raise SettingsError("the parallel corpus file name is empty")
        check_special_tokens(self.special_tokens)
        return self
