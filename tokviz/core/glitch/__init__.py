"""The glitch-token finder: which tokens of a tokenizer a model probably never learned, ranked.

Evidence comes from the tokenizer and a corpus only (no model weights): a token its own text does
not encode back to (unreachable), bytes that are not text (undecodable), and pieces of its merge
tree that the corpus holds far less often than their merge rank predicts (`evidence`). `score`
weighs them into one number with its parts and a "why" text; `report` runs the finder in chunks
so a GUI can show rows while it works, and says when the corpus is too small to judge.
"""

from .evidence import CATEGORIES, MergeGraph, round_trip_category
from .report import MAX_CORPUS_CHARS, Coverage, GlitchReport, GlitchScan, find_glitches, glitch_report
from .score import GlitchRow, why_text

__all__ = ["CATEGORIES", "MAX_CORPUS_CHARS", "Coverage", "GlitchReport", "GlitchRow", "GlitchScan", "MergeGraph", "find_glitches",
           "glitch_report", "round_trip_category", "why_text"]
