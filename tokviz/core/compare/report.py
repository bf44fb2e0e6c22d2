"""A comparison as rows: CSV rows, short model labels, and the per-script summary.

What `tokviz compare --csv` prints and what the Compare panel exports are the same rows
(`csv_header`, `csv_rows`). `short_labels` names models by the shortest path endings that tell
them apart, a model's folder standing for a generic file name such as ``tokenizer.json``.
`script_summary` groups the documents by dominant script: how many documents each script has and
each model's mean premium over them (the "which scripts pay more" view of Petrov et al. 2023). What this leaves out: measuring (`run`), drawing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .documents import Document, gini, premiums
from .metrics import METRIC_KEYS, Metrics
from .run import Comparison, ModelResult

DOCUMENT_FIELDS = ("document", "title", "script", "premium")
SHARES = ("continued_words", "vocab_used", "unk_rate", "byte_fallback_rate", "strr", "utf8_whole_token_rate",
          "utf8_boundary_crossing_rate", "utf8_split_char_rate")  # shown in percent


def format_figure(key: str, value, *, none: str = "–") -> str:
    """A figure for a table: thousands separators, shares in percent, None as `none`.

    >>> format_figure("tokens", 12345), format_figure("unk_rate", 0.01234), format_figure("fertility", None, none="-")
    ('12,345', '1.23%', '-')
    """
    if value is None:
        return none
    if isinstance(value, int):
        return f"{value:,}"
    if key in SHARES:
        return f"{100 * value:.2f}%"
    return f"{value:.3f}"


def csv_header(*, by_document: bool, keys: Sequence[str] = METRIC_KEYS) -> list[str]:
    """The header row: ``model``, the document fields (by document), the metrics (`keys`: those of
    `metrics.metric_keys` for the Rényi orders measured), ``gini``."""
    return ["model", *(DOCUMENT_FIELDS if by_document else ()), *keys, *(("gini",) if by_document else ())]


def _cells(m: Metrics) -> list:
    return ["" if v is None else v for v in m.as_dict().values()]


def csv_rows(r: ModelResult, docs: Sequence[Document]) -> list[list]:
    """One row per document then the model's whole-text row with its Gini (by document), or one
    row; None is an empty field.

    >>> from tokviz.core.compare.metrics import compute_metrics
    >>> import numpy as np
    >>> m = compute_metrics(np.array([1, 2]), chars=4, n_bytes=4, words=2, continued=0, vocab_size=10,
    ...                     unk_ids=np.array([], dtype=np.int64), byte_ids=None)
    >>> csv_rows(ModelResult("toy", metrics=m), [])[0][:5]
    ['toy', 2, 4, 4, 2]
    """
    if not docs:
        return [[r.model, *_cells(r.metrics)]]
    rows = [[r.model, d.number, d.title, d.script, "" if p is None else p, *_cells(m), ""]
            for d, m, p in zip(docs, r.documents, r.premiums)]
    rows.append([r.model, "all", "", "", "", *_cells(r.metrics), "" if r.gini is None else r.gini])
    return rows


# file names every model of a format has: the folder holding one names the model
GENERIC_FILE_NAMES = frozenset({
    "tokenizer.json", "tokenizer.model", "tokenizer_config.json", "tekken.json", "vocab.txt", "vocab.json",
    "merges.txt", "encoder.json", "vocab.bpe", "spiece.model", "sentencepiece.bpe.model",
})
MODEL_SUFFIXES = (".tiktoken", ".gguf")  # file name endings that only say the format


def _name_parts(model: str) -> list[str]:
    """The path parts of a model label with a generic file name dropped for its folder and a
    format's ending dropped (a step suffix ``@K`` kept): ``/m/gpt2/tokenizer.json@5`` ->
    ``['', 'm', 'gpt2@5']``, ``v/cl100k_base.tiktoken`` -> ``['v', 'cl100k_base']``."""
    parts = model.replace(os.sep, "/").rstrip("/").split("/")
    base, at, step = parts[-1].rpartition("@")
    if not (at and step.isdigit()):
        base, step = parts[-1], ""
    suffix = f"@{step}" if step else ""
    if len(parts) > 1 and parts[-2] and base.casefold() in GENERIC_FILE_NAMES:
        return [*parts[:-2], parts[-2] + suffix]
    for ending in MODEL_SUFFIXES:
        if base.casefold().endswith(ending) and len(base) > len(ending):
            return [*parts[:-1], base[: -len(ending)] + suffix]
    return parts


def _shortest_distinct(parts: list[list[str]]) -> list[str] | None:
    for n in range(1, max(map(len, parts), default=0) + 1):
        short = ["/".join(p[-n:]) for p in parts]
        if len(set(short)) == len(short):
            return short
    return None


def short_labels(models: Sequence[str]) -> list[str]:
    """What to call each model on screen: the shortest path endings that tell them apart, a
    folder standing for the generic file in it (``gpt2/tokenizer.json`` is ``gpt2``) and no
    format ending (``cl100k_base.tiktoken`` is ``cl100k_base``).

    >>> short_labels(["a/x/t.json", "b/x/t.json", "c"])
    ['a/x/t.json', 'b/x/t.json', 'c']
    >>> short_labels(["/m/gpt2/tokenizer.json", "/m/bert/tokenizer.json"]), short_labels(["gpt2/tokenizer.json"])
    (['gpt2', 'bert'], ['gpt2'])
    >>> short_labels(["/m/gpt2/tokenizer.json@40", "/v/cl100k_base.tiktoken", "tokenizer.json"])
    ['gpt2@40', 'cl100k_base', 'tokenizer.json']
    >>> short_labels(["v/cl100k_base.tiktoken", "cl100k_base"])  # a file and a known name
    ['v/cl100k_base', 'cl100k_base']
    >>> short_labels(["m/gpt2/tokenizer.json", "m/gpt2/vocab.json"])  # one folder, two files
    ['tokenizer.json', 'vocab.json']
    """
    return (_shortest_distinct([_name_parts(m) for m in models])
            or _shortest_distinct([m.replace(os.sep, "/").rstrip("/").split("/") for m in models])
            or list(models))


@dataclass(frozen=True)
class ScriptRow:
    """The documents whose dominant script is `script`, and each model's mean premium on them."""

    script: str
    documents: int
    chars: int
    mean_premiums: tuple[float | None, ...]  # one per model, None where no premium is defined


def script_summary(results: Sequence[ModelResult], docs: Sequence[Document]) -> list[ScriptRow]:
    """One row per script, most documents first (then by name).

    >>> d = [Document(1, "A", 0, 4, "Latin"), Document(2, "B", 4, 6, "Cyrillic"), Document(3, "C", 6, 9, "Latin")]
    >>> r = ModelResult("m", premiums=(1.0, 2.0, 3.0))
    >>> [(s.script, s.documents, s.chars, s.mean_premiums) for s in script_summary([r], d)]
    [('Latin', 2, 7, (2.0,)), ('Cyrillic', 1, 2, (2.0,))]
    """
    groups: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        groups.setdefault(d.script, []).append(i)
    rows = []
    for script, idx in groups.items():
        means = []
        for r in results:
            vals = [r.premiums[i] for i in idx if i < len(r.premiums) and r.premiums[i] is not None]
            means.append(sum(vals) / len(vals) if vals else None)
        rows.append(ScriptRow(script, len(idx), sum(docs[i].end - docs[i].start for i in idx), tuple(means)))
    rows.sort(key=lambda s: (-s.documents, s.script))
    return rows


def with_reference(c: Comparison, reference: int) -> Comparison:
    """The same comparison with premiums over document index `reference` (no re-encoding: the
    premiums are the documents' token counts over the reference's; the Gini does not change).

    >>> from tokviz.core.compare.metrics import compute_metrics
    >>> import numpy as np
    >>> m = [compute_metrics(np.arange(n), chars=n, n_bytes=n, words=1, continued=0, vocab_size=9,
    ...                      unk_ids=np.array([], dtype=np.int64), byte_ids=None) for n in (2, 4)]
    >>> d = (Document(1, "A", 0, 2), Document(2, "B", 2, 6))
    >>> c = Comparison((ModelResult("m", documents=tuple(m), premiums=(1.0, 2.0), gini=1 / 6),), d, 0)
    >>> with_reference(c, 1).results[0].premiums
    (0.5, 1.0)
    """
    results = []
    for r in c.results:
        if r.documents:
            prem = premiums([m.tokens for m in r.documents], reference)
            r = replace(r, premiums=tuple(prem), gini=gini(prem))
        results.append(r)
    return Comparison(tuple(results), c.documents, reference)


def growth_steps(last_step: int, points: int = 40) -> list[int]:
    """At most `points` steps from 0 to `last_step`, evenly spread, both ends included.

    >>> growth_steps(10, 4), growth_steps(3), growth_steps(0)
    ([0, 3, 7, 10], [0, 1, 2, 3], [0])
    """
    if last_step <= 0:
        return [0]
    n = min(points, last_step + 1)
    return sorted({round(i * last_step / (n - 1)) for i in range(n)})
