"""WordPiece's settings: every option of a training run, declared once (`tokviz.core.algorithm.options`)
for the command line, the training panel and model files, and the model files' format name.

Kept apart from the trainer, as every algorithm's are (`tokviz.core.bpe.settings` says why). What
this leaves out: the training run, its timeline and model files (`tokviz.core.wordpiece.timeline`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.core.algorithm.options import option
from tokviz.core.algorithm.piece_tokenizer import check_specials
from tokviz.core.algorithm.staged import (
    MERGES,
    MIN_PAIR_COUNT,
    SPECIAL_TOKENS,
    SPLIT,
    VOCAB_SIZE,
    JsonSettings,
    check_budget,
)
from tokviz.core.errors import SettingsError
from tokviz.core.text.split import parse_split

FORMAT_NAME = "tokviz-wordpiece"  # the "format" header of a WordPiece model file
MAX_WORD_CHARS = 100  # longer words encode as [UNK] (BERT's default)


@dataclass(frozen=True)
class WordPieceSettings(JsonSettings):
    """Every option of a WordPiece run. `vocab_size` counts [UNK] + specials + base + merges."""

    vocab_size: int | None = option(None, **VOCAB_SIZE)
    merges: int | None = option(None, **MERGES)
    split: str = option("whitespace", **SPLIT)
    min_count: int = option(1, **MIN_PAIR_COUNT)
    special_tokens: tuple[str, ...] = option((), **SPECIAL_TOKENS)
    max_word_chars: int = option(MAX_WORD_CHARS, flag="--max-word-chars", label="Max &word length:", low=1,
                                 high=100_000, help="words longer than this many characters become [UNK] (BERT: 100)")

    algorithm = "wordpiece"

    def validate(self) -> WordPieceSettings:
        """Raise `SettingsError` / `SplitError` for settings that cannot work; return self."""
        parse_split(self.split)
        check_budget(self.vocab_size, self.merges, self.min_count)
        if self.max_word_chars < 1:
            raise SettingsError(f"maximum word length must be at least 1, got {self.max_word_chars}")
        check_specials(self.special_tokens)
        return self
