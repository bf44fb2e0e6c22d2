"""BoundlessBPE's settings: BPE's (the same declarations: units, split, budget, min count, specials,
ties) and the paper's own, declared once (`tokviz.core.algorithm.options`) for the command line,
the training panel and model files, and the model files' format name.

Kept apart from the trainer, as every algorithm's are (`tokviz.core.bpe.settings` says why). What
this leaves out: the training run and its timeline (`tokviz.core.boundless.timeline`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from tokviz.core.algorithm.options import option
from tokviz.core.algorithm.staged import JsonSettings
from tokviz.core.bpe.settings import TrainSettings
from tokviz.core.errors import SettingsError

from .runs import SUPERWORD_RULES

FORMAT_NAME = "tokviz-boundless"  # the "format" header of a BoundlessBPE model file
ON_OFF = ("on", "off")
_BPE = {f.name: f for f in fields(TrainSettings)}


def _bpe(name: str):
    """BPE's field `name`, declared the same way here (one declaration, two algorithms)."""
    f = _BPE[name]
    return field(default=f.default, metadata=f.metadata)


@dataclass(frozen=True)
class BoundlessSettings(JsonSettings):
    """BPE's settings and BoundlessBPE's own. The budget counts steps of both kinds."""

    units: str = _bpe("units")
    split: str = _bpe("split")
    end_of_word: str | None = _bpe("end_of_word")
    vocab_size: int | None = _bpe("vocab_size")
    merges: int | None = _bpe("merges")
    min_count: int = _bpe("min_count")
    special_tokens: tuple[str, ...] = _bpe("special_tokens")
    word_counts: bool = False
    tie_break: str = _bpe("tie_break")
    supermerges: str = option("on", flag="--supermerges", label="Super&merges:", kind="choice", choices=ON_OFF,
                              help="join two whole pretokens that are each one token (' of' + ' the'); "
                                   "off: plain BPE")
    superwords: str = option("letters", flag="--superwords", label="Superwords &of:", kind="choice",
                             choices=SUPERWORD_RULES,
                             help="which pretokens a superword may hold: letters (the paper's: letters, "
                                  "spaces, apostrophes, underscores) or any")

    def bpe_settings(self) -> TrainSettings:
        """The BPE settings of the word side."""
        return TrainSettings(**{name: getattr(self, name) for name in _BPE})

    def validate(self) -> BoundlessSettings:
        self.bpe_settings().validate()
        if self.supermerges not in ON_OFF:
            raise SettingsError(f"supermerges must be on or off, got {self.supermerges!r}")
        if self.superwords not in SUPERWORD_RULES:
            raise SettingsError(f"unknown superword rule {self.superwords!r}; choose {', '.join(SUPERWORD_RULES)}")
        return self
