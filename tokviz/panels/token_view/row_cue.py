"""`RowCue`: the token view's "Tokenizer: …" line, naming what its coloured tokens show.

With a model trained or opened, that is the window's tokenizer at its step (`ModelCue`). With none,
the view still shows its first comparison row (a tokenizer a lesson or "Add…" loaded, or a
baseline such as character-level), and the cue names that row rather than "no tokenizer yet".
"""

from __future__ import annotations

import html

from tokviz.engine.step_model import StepModel
from tokviz.panels.model_cue import ModelCue

TRAINED_ROWS = ("step", "final")  # rows of the step model's own tokenizer
TIP = ("No model is trained or opened: the coloured tokens are this row's (a model trained or opened "
       "becomes the first row)")


class RowCue(ModelCue):
    """The cue of a `TokenViewPanel` (`panel`): its step model's tokenizer, or the row it shows."""

    def __init__(self, panel, step_model: StepModel) -> None:
        self._panel = panel
        super().__init__("Tokenizer", object_name="token_view_cue", step_model=step_model)
        panel.result_shown.connect(self.refresh)

    def describe(self, step_model: StepModel) -> tuple[str, str]:
        result = self._panel.result
        ref = result.reference if result is not None else None
        # a trained row left from before the model went away is not what the next result shows
        if step_model.timeline is not None or ref is None or ref.spec.key in TRAINED_ROWS:
            return super().describe(step_model)
        n = len(result.rows)
        kind = "whole vocabulary" if ref.spec.tokenizer is not None else "baseline"
        others = f" · first of {n} rows compared" if n > 1 else ""
        return f"<b>{html.escape(ref.spec.title)}</b> · {kind}{others}", TIP
