"""Every figure kind a lesson file may name: its function (`FIGURES`), the caption fields it
fills (`FIGURE_FIELDS`, checked when a lesson file is read) and `compute_figure`, which runs the
one a lesson asks for."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .algorithm_figures import unigram_rounds, wordpiece_scores
from .figures import (
    Figure,
    FigureContext,
    batch_table,
    cross_space,
    digits,
    glitch,
    neighbours,
    oov,
    scripts,
    segmentations,
    static_table,
    unit_counts,
    utf8_table,
    vocab_curve,
)
from .method_figures import dropout_samples, parity_languages, superbpe_stages, supermerges

FIGURES: dict[str, Callable[[FigureContext], tuple[Figure, dict]]] = {
    "unit_counts": unit_counts,
    "oov": oov,
    "segmentations": segmentations,
    "vocab_curve": vocab_curve,
    "utf8": utf8_table,
    "cross_space": cross_space,
    "digits": digits,
    "scripts": scripts,
    "glitch": glitch,
    "neighbours": neighbours,
    "batch": batch_table,
    "table": static_table,
    "wordpiece": wordpiece_scores,
    "unigram": unigram_rounds,
    "superbpe": superbpe_stages,
    "supermerges": supermerges,
    "parity": parity_languages,
    "dropout": dropout_samples,
}


def _fields_of(*names: str) -> frozenset[str]:
    return frozenset(names)


_PRE = ("gpt2", "cl100k_base", "o200k_base")
FIGURE_FIELDS: dict[str, frozenset[str]] = {
    "unit_counts": _fields_of("chars", "words", "subwords", "subword_pieces"),
    "oov": _fields_of(*(f"{k}_{f}" for k in ("word", "char") for f in ("tokens", "unk", "lost")),
                      "bpe_tokens", "bpe_round_trip"),
    "segmentations": frozenset(),
    "vocab_curve": _fields_of("base", "max_vocab", "first_tokens", "last_tokens"),
    "utf8": _fields_of("chars", "bytes", "partial"),
    "cross_space": _fields_of(*(f"{s}_{f}" for s in ("none", "whitespace", "gpt2", "gpt4", "o200k")
                                for f in ("cross", "examples"))),
    "digits": _fields_of("number", *(f"{n}_{f}" for n in _PRE for f in ("pieces", "one_token"))),
    "scripts": _fields_of("least_lang", "least_ratio", "most_lang", "most_ratio", "factor"),
    "glitch": _fields_of(*(f"{n}_{f}_{i}" for n in _PRE for f in ("ids", "pieces", "count") for i in range(4))),
    "neighbours": _fields_of("token", "nearest", "best_similarity"),
    "batch": _fields_of("width", "pad_id"),
    "table": frozenset(),
    "wordpiece": _fields_of(*(f"{w}_{c}" for w in ("winner", "frequent") for c in ("count", "score")), "winner",
                            "frequent", *(f"{w}{c}" for w in ("word", "unk") for c in ("", "_pieces", "_tried", "_reason"))),
    "unigram": _fields_of("seed_size", "vocab_size", "pruned", "log_likelihood", "rounds", "pruned_examples",
                          "pruned_piece", "pruned_loss", "pruned_alternative", "word", "n_segmentations", "best",
                          "best_prob", "second", "second_prob", "samples", "alpha"),
    "superbpe": _fields_of("transition", "superwords", "stage", "bpt_start", "bpt_transition", "bpt_now",
                           "first_superword", "first_superword_step", "top_superwords", "pieces"),
    "supermerges": _fields_of("supermerges", "inside", "kind", "note", "first_super", "first_super_step",
                              "latest_supers", "pieces"),
    "parity": _fields_of("gini_start", "gini_now", "languages", "costliest_start", "most_start", "least_start",
                         "most_now", "least_now", "served", "served_before", "served_after", "bpe_gini",
                         "bpe_most", "bpe_least", "bpe_costliest"),
    "dropout": _fields_of("word", "usual", "dropout", "samples", "n_segmentations", "usual_share",
                          "dropout_high", "high_n_segmentations", "high_usual_share", "rare"),
}


def compute_figure(spec: Mapping | None, ctx: FigureContext) -> tuple[Figure | None, dict]:
    """The figure of a lesson (`spec` = its ``figure`` entry, or None) and its caption fields."""
    if spec is None:
        return None, {}
    return FIGURES[spec["kind"]](ctx)
