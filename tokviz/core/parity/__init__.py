"""Parity: the first text on which two tokenizers give different ids, and why.

Generated texts (`generate`), delta debugging down to a minimal text (`shrink`), each tokenizer's
output stage by stage and the first stage where two differ (`stages`), the search that ties them
together (`search`) and its report (`report`). Works on any two timelines tokviz opens (any
formats, or one model at two steps). Pure Python; no printing, no Qt.
"""

from .generate import KINDS, fuzz_inputs
from .report import as_json, report_lines
from .search import Difference, ParityResult, candidates, explain, find_difference
from .shrink import shrink
from .stages import IGNORABLE, STAGES, Outcome, Side, StageView, disagree, first_stage, stage_view

__all__ = [name for name in dir() if not name.startswith("_")]
