"""Unigram's settings: every option of a training run, declared once (`tokviz.core.algorithm.options`)
for the command line, the training panel and model files, their defaults (the trainer's too), and
the model files' format name.

Kept apart from the trainer, as every algorithm's are (`tokviz.core.bpe.settings` says why). What
this leaves out: the training run and its timeline (`tokviz.core.unigram.timeline`), the trainer.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.core.algorithm.options import option
from tokviz.core.algorithm.piece_tokenizer import check_specials
from tokviz.core.algorithm.staged import SPECIAL_TOKENS, SPLIT, VOCAB_SIZE, JsonSettings
from tokviz.core.errors import SettingsError
from tokviz.core.text.split import parse_split

FORMAT_NAME = "tokviz-unigram"  # the "format" header of a Unigram model file (`tokviz.core.unigram.model_file`)
WORD_PREFIX = "\u2581"  # "▁"
MAX_PIECE_CHARS = 16
MAX_PIECE_CHARS_LIMIT = 64  # the seed's substring table costs characters x this; sentencepiece's default is 16
PRUNE_FRACTION = 0.25
EM_ITERATIONS = 2


@dataclass(frozen=True)
class UnigramSettings(JsonSettings):
    """Every option of a Unigram run. `vocab_size` counts [UNK] + specials + pieces."""

    vocab_size: int = option(8000, **VOCAB_SIZE)  # the vocabulary ends smaller if the seed is smaller
    split: str = option("whitespace", **SPLIT)
    word_prefix: str | None = WORD_PREFIX
    max_piece_chars: int = MAX_PIECE_CHARS
    seed_size: int | None = option(None, flag="--seed-size", label="Seed si&ze:", low=0, high=10_000_000,
                                   none_text="Auto (10× the target)", unset="10 times the target",
                                   help="how many frequent substrings the seed vocabulary starts from")
    seed_min_count: int = option(2, flag="--min-count", label="&Min seed count:", low=1, high=1_000_000_000,
                                 row="panel", help="substrings seen fewer times never enter the seed vocabulary")
    prune_fraction: float = option(PRUNE_FRACTION, flag="--prune-fraction", label="P&rune per round:", kind="float",
                                   low=0.01, high=0.99, step=0.05, metavar="F",
                                   help="fraction of the pieces each round removes (those that cost least)")
    em_iterations: int = option(EM_ITERATIONS, flag="--em-iterations", label="EM &iterations:", low=1, high=100,
                                help="EM iterations (expected counts, then new probabilities) per round")
    special_tokens: tuple[str, ...] = option((), **SPECIAL_TOKENS)

    algorithm = "unigram"

    def validate(self) -> UnigramSettings:
        """Raise `SettingsError` / `SplitError` for settings that cannot work; return self."""
        parse_split(self.split)
        if self.vocab_size < 1:
            raise SettingsError(f"vocabulary size must be positive, got {self.vocab_size}")
        if self.word_prefix is not None and len(self.word_prefix) != 1:
            raise SettingsError(f"the word prefix must be one character (like '▁') or none, got {self.word_prefix!r}")
        if not 1 <= self.max_piece_chars <= MAX_PIECE_CHARS_LIMIT:  # the seed's table grows with it
            raise SettingsError(f"maximum piece length must be between 1 and {MAX_PIECE_CHARS_LIMIT}, "
                                f"got {self.max_piece_chars}")
        if self.seed_size is not None and self.seed_size < 1:
            raise SettingsError(f"seed size must be positive, got {self.seed_size}")
        if self.seed_min_count < 1:
            raise SettingsError(f"seed minimum count must be at least 1, got {self.seed_min_count}")
        if not 0.0 < self.prune_fraction < 1.0:
            raise SettingsError(f"prune fraction must be between 0 and 1 (e.g. 0.25), got {self.prune_fraction}")
        if self.em_iterations < 1:
            raise SettingsError(f"EM iterations per round must be at least 1, got {self.em_iterations}")
        check_specials(self.special_tokens)
        return self
