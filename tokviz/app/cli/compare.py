"""``tokviz compare MODEL... -f TEXT [--json | --csv] [--by-document] [--step K] [--reference DOC] [--renyi-alpha A...]``.

Measures each MODEL on the text (`tokviz.core.compare`): any model ``tokviz encode`` opens (a
tokviz model file, a ``.tiktoken`` file, a ``tokenizer.json``, a name such as ``cl100k_base``),
at the step ``--step K`` gives or a step of its own written ``MODEL@K``. Output: an aligned
table (one column per model) by default; ``--json``: one object per model per line, in argument
order, with ``model`` and the metric keys (and, with ``--by-document``, ``gini``, ``reference``
and a ``documents`` list); ``--csv``: one row per model (per model and document with
``--by-document``, then the model's whole-text row with its Gini coefficient). ``--renyi-alpha``
takes one or more Rényi orders: the first is ``renyi_efficiency``'s, each further one adds
``renyi_efficiency@A`` and ``renyi_efficiency_observed@A``.

The text is read in pieces of whole lines (`tokviz.core.compare.FileSource`), once per model: a
corpus of any size takes the memory of a piece, not of the corpus. A model that cannot be opened
or measured is reported on stderr in one line while the others still print; the exit status is
then 2. While it runs, progress goes to stderr (`compare_progress`; ``--quiet``: none).
What this leaves out: the metrics (core), the GUI.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

from tokviz.core import TokvizError
from tokviz.core.compare import (
    RENYI_ALPHA,
    Document,
    FileSource,
    ModelResult,
    ModelSpec,
    iter_compare,
    prepare_documents,
)
from tokviz.core.compare.metrics import metric_keys
from tokviz.core.compare.report import csv_header, csv_rows, format_figure, short_labels
from tokviz.core.errors import CorpusError
from tokviz.core.processes.parallel import choose_processes

from .compare_progress import CompareProgress
from .messages import one_line

EXIT_FAILED = 2
TITLE_WIDTH = 32


def add_compare_arguments(c: argparse.ArgumentParser, positive) -> None:
    """``tokviz compare``'s arguments (`tokviz.app.cli.parser` makes its parser)."""
    c.add_argument("models", nargs="+", metavar="MODEL",
                   help="anything tokviz encode takes (a model file, a tokenizer, a name); MODEL@K: its step K")
    c.add_argument("-f", "--file", required=True, metavar="TEXT", help="the UTF-8 text (or corpus) to measure on")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_const", const="json", dest="format",
                     help="one JSON object per model per line")
    fmt.add_argument("--csv", action="store_const", const="csv", dest="format", help="CSV rows with a header")
    c.add_argument("--by-document", action="store_true",
                   help="split the text into documents (an unindented title line starts one) and measure each")
    c.add_argument("--step", type=positive, metavar="K", help="use only the first K steps of every model")
    c.add_argument("--reference", metavar="DOC",
                   help="document the premiums are relative to: its number or title (default: the English UDHR, else 1)")
    c.add_argument("--pattern", metavar="REGEX", help="split pattern of a .tiktoken file tokviz does not know")
    c.add_argument("--renyi-alpha", type=_alpha, nargs="+", default=[RENYI_ALPHA], metavar="A",
                   help=f"Rényi order(s) of the efficiency (default {RENYI_ALPHA}; tokenization-scorer's default is 3)")
    c.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _alpha(text: str) -> float:
    """A Rényi order: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0 <= value < float("inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Rényi order (a number >= 0, such as 2.5)")
    return value


def model_specs(names: list[str], step: int | None, read_model, pattern: str | None) -> list[ModelSpec]:
    """One spec per MODEL argument; ``MODEL@K`` (when no file is named so) is MODEL at step K."""
    specs = []
    for name in names:
        source, at, k = name.rpartition("@")
        if at and source and k.isdigit() and not os.path.exists(name):
            spec_step, label = int(k), name
        else:
            source, spec_step = name, step
            label = name if step is None else f"{name}@{step}"
        specs.append(ModelSpec(label, lambda s=source: read_model(s, pattern), spec_step))
    return specs


def run_compare(args: argparse.Namespace, read_model, usage_error: type[Exception]) -> int:
    """``tokviz compare``; `read_model(path, pattern)` opens a MODEL as ``tokviz encode`` does."""
    if args.reference is not None and not args.by_document:
        raise usage_error("tokviz compare: --reference needs --by-document")
    # read in pieces, once to check it (binary or not UTF-8: one-line CorpusError) or to split it
    # into documents, then once per model: memory follows the piece, not the corpus
    text = FileSource(args.file)
    docs: list[Document] = []
    ref = None
    if args.by_document:
        try:
            docs, ref = prepare_documents(text, args.reference)
        except CorpusError:
            raise
        except TokvizError as exc:
            raise usage_error(f"tokviz compare: {exc}") from None
    else:
        text.check()
    specs = model_specs(args.models, args.step, read_model, args.pattern)
    out = sys.stdout
    alphas = tuple(dict.fromkeys(args.renyi_alpha))  # in order, each once
    writer = _CsvOut(out, by_document=args.by_document, keys=metric_keys(alphas)) if args.format == "csv" else None
    results: list[ModelResult] = []
    failed = False
    progress = CompareProgress(sys.stderr, [s.label for s in specs], documents=len(docs),
                               enabled=not args.quiet)
    progress.start()
    processes = choose_processes(independent=True)  # the models never wait for each other
    for event in iter_compare(text, specs, by_document=args.by_document, documents=docs or None,
                              reference=args.reference, processes=processes, renyi_alphas=alphas):
        r = event.result
        progress.update(event.model_index, event.done, event.total, finished=r is not None)
        if r is None:
            continue
        if r.error is not None:
            failed = True
            progress.clear()
            print(one_line(f"tokviz compare: {r.model}: {r.error}"), file=sys.stderr)
            continue
        if args.format == "json":
            out.write(json.dumps(_json_row(r, docs, ref), ensure_ascii=False) + "\n")
            out.flush()
        elif writer is not None:
            writer.write(r, docs)
        else:
            results.append(r)
    progress.clear()
    if args.format is None and results:
        lines = _document_table(results, docs, ref) if args.by_document else _metric_table(results, alphas)
        out.write("\n".join(lines) + "\n")
    return EXIT_FAILED if failed else 0


# -- machine-readable -----------------------------------------------------------------------


def _json_row(r: ModelResult, docs: list[Document], ref: int | None) -> dict:
    row = {"model": r.model, **r.metrics.as_dict(), "renyi_alpha": r.metrics.renyi_alpha,
           "numbers_by_length": _number_lengths(r.metrics)}
    if docs:
        row["gini"] = r.gini
        row["reference"] = docs[ref].number
        row["documents"] = [
            {"document": d.number, "title": d.title, "script": d.script, "premium": p, **m.as_dict()}
            for d, m, p in zip(docs, r.documents, r.premiums)
        ]
    return row


def _number_lengths(m) -> dict:
    """Numbers by length group: how many, tokens per digit, split entropy in bits."""
    return {g.group: {"numbers": g.numbers, "tokens_per_digit": g.tokens_per_digit, "split_entropy": g.split_entropy}
            for g in m.number_lengths}


class _CsvOut:
    """CSV rows as results arrive (`tokviz.core.compare.report`)."""

    def __init__(self, out, *, by_document: bool, keys: tuple[str, ...]) -> None:
        self.out = out
        self.writer = csv.writer(out, lineterminator="\n")
        self.writer.writerow(csv_header(by_document=by_document, keys=keys))

    def write(self, r: ModelResult, docs: list[Document]) -> None:
        self.writer.writerows(csv_rows(r, docs))
        self.out.flush()


# -- tables ---------------------------------------------------------------------------------


def _cell(key: str, value) -> str:
    return format_figure(key, value, none="-")


def _align(rows: list[list[str]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell; the first `left` columns flush left."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]


def _labels(results: list[ModelResult]) -> list[str]:
    return short_labels([r.model for r in results])


def _metric_table(results: list[ModelResult], alphas: tuple[float, ...]) -> list[str]:
    """One row per metric, one column per model."""
    rows = [["metric", *_labels(results)]]
    figures = [r.metrics.as_dict() for r in results]
    for key in metric_keys(alphas):
        rows.append([key, *(_cell(key, f[key]) for f in figures)])
    return _align(rows)


def _short(title: str) -> str:
    return title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1] + "…"


def _document_table(results: list[ModelResult], docs: list[Document], ref: int | None) -> list[str]:
    """One row per document: its script and chars, then each model's tokens, fertility and
    premium; the Gini coefficients last (--json and --csv carry every metric)."""
    head = ["#", "title", "script", "chars"]
    for label in _labels(results):
        head += [f"{label} tokens", "fertility", "premium"]
    rows = [head]
    for i, d in enumerate(docs):
        row = [str(d.number) + ("*" if i == ref else ""), _short(d.title), d.script, f"{d.end - d.start:,}"]
        for r in results:
            m = r.documents[i]
            row += [_cell("tokens", m.tokens), _cell("fertility", m.fertility), _cell("premium", r.premiums[i])]
        rows.append(row)
    total = ["", "all", "", f"{results[0].metrics.chars:,}"]
    gini = ["", "Gini of premiums", "", ""]
    for r in results:
        total += [_cell("tokens", r.metrics.tokens), _cell("fertility", r.metrics.fertility), ""]
        gini += ["", "", _cell("gini", r.gini)]
    rows += [total, gini]
    note = f"* reference document for premiums: {docs[ref].number} {_short(docs[ref].title)}" if ref is not None else ""
    return _align(rows, left=3) + ([note] if note else [])
