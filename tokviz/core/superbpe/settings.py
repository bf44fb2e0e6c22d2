"""SuperBPE's settings: BPE's and the transition step t, declared once (`tokviz.core.algorithm.options`)
for the command line, the training panel and model files, and the model files' format name.

Kept apart from the trainer, as every algorithm's are (`tokviz.core.bpe.settings` says why). What
this leaves out: the training run and its timeline (`tokviz.core.superbpe.timeline`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.core.algorithm.options import option
from tokviz.core.bpe.settings import TrainSettings
from tokviz.core.errors import SettingsError

FORMAT_NAME = "tokviz-superbpe-model"  # the "format" header of a SuperBPE model file
STAGE_ONE_SPLITS = ("gpt2", "gpt4", "o200k")  # splits at spaces that keep every character
TRANSITION_HIGH = 10_000_000


@dataclass(frozen=True)
class SuperBpeSettings(TrainSettings):
    """BPE's settings and the transition step t (stage 1 makes merges 0..t-1)."""

    transition: int = option(1000, flag="--transition", label="&Transition:", low=0, high=TRANSITION_HIGH,
                             metavar="T", help="merges made with the split before superwords may form "
                                               "(the paper: about four fifths of the merges)")

    def validate(self) -> SuperBpeSettings:
        super().validate()
        if self.split not in STAGE_ONE_SPLITS:
            raise SettingsError(f"SuperBPE's stage 1 splits at spaces and keeps every character: choose the split "
                                f"{', '.join(STAGE_ONE_SPLITS)}, not {self.split!r}")
        if self.end_of_word is not None:
            raise SettingsError("SuperBPE has no end-of-word mark (a superword spans several words); remove it")
        if not isinstance(self.transition, int) or isinstance(self.transition, bool) or self.transition < 0:
            raise SettingsError(f"the transition must be a number of merges (0 or more), got {self.transition!r}")
        if self.merges is not None and self.merges < self.transition:
            raise SettingsError(f"the transition ({self.transition}) comes after the last merge ({self.merges}); "
                                f"choose a transition of at most {self.merges}")
        return self

    def stage_one(self) -> TrainSettings:
        """The plain BPE settings of stage 1 (the same run, t merges at most)."""
        fields = {k: v for k, v in self.to_json().items() if k != "transition"}
        fields["special_tokens"] = tuple(fields["special_tokens"])
        return TrainSettings(**fields)
