"""``tokviz glitch MODEL [--corpus FILE...] [--top N] [--json | --report]``: the glitch finder of
the window's Glitch tokens panel, from the command line.

The ranking is the panel's (`tokviz.core.glitch.glitch_report`) on the same text: the first
`MAX_CORPUS_CHARS` characters of the corpus (``--max-chars`` changes that; several files are
ranked as one corpus, in order). Output: an aligned table of the top N by default; ``--json``:
one object with the coverage and the top N rows (every row with ``--top 0``); ``--report``: a
Markdown report laid out as cohere-ai/magikarp's (`tokviz.core.glitch.markdown`). Progress goes to
stderr on a terminal.

``--weights PATH`` (a .safetensors file, a sharded model's index or its folder) adds Magikarp's
indicators from the model's embedding matrices (`tokviz.core.weights`) as columns and JSON keys,
and ranks by the combined value of both pieces of evidence (`tokviz.core.weights.combine`);
``--unused-ids`` names the known-unused tokens the cosine compares with instead of the tokenizer's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from tokviz.core.errors import TokvizError
from tokviz.core.glitch import MAX_CORPUS_CHARS, GlitchRow, glitch_report, why_text
from tokviz.core.glitch.markdown import markdown_report, token_text
from tokviz.core.text.corpus import ENCODING_ERRORS, read_text_head

from .arguments import MODEL_HELP


def add_glitch_arguments(g: argparse.ArgumentParser, whole_number) -> None:
    """``tokviz glitch``'s arguments (`tokviz.app.cli.parser` makes its parser)."""
    g.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    g.add_argument("--corpus", action="append", metavar="FILE",
                   help="UTF-8 text the ranking checks the tokens against (repeatable); without one the "
                        "ranking rests on the round trip and the merge order alone")
    g.add_argument("--max-chars", type=whole_number, default=MAX_CORPUS_CHARS, metavar="N",
                   help=f"characters of the corpus to read, from its start (default {MAX_CORPUS_CHARS:,}, "
                        "as the window's panel)")
    g.add_argument("--top", type=whole_number, default=20, metavar="N",
                   help="how many of the highest-scored tokens to print (0: all; default 20)")
    g.add_argument("--pattern", metavar="REGEX", help="split pattern of a .tiktoken file tokviz does not know")
    g.add_argument("--encoding-errors", choices=ENCODING_ERRORS, default="strict",
                   help="strict: refuse a corpus that is not UTF-8; replace: read bad bytes as U+FFFD")
    g.add_argument("--weights", metavar="PATH",
                   help="the model's weights (.safetensors file, model.safetensors.index.json or a folder): add "
                        "Magikarp's indicators from its embedding matrices and rank by both pieces of evidence")
    g.add_argument("--unused-ids", metavar="IDS",
                   help="with --weights: ids known never to occur in training (e.g. 177-187,50257-50303), the "
                        "reference the cosine indicator compares with (default: found from the tokenizer)")
    fmt = g.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_const", const="json", dest="format",
                     help="one JSON object: the coverage and the rows (token bytes in hex)")
    fmt.add_argument("--report", action="store_const", const="report", dest="format",
                     help="a Markdown report: summary, ranked candidates, unreachable and undecodable tokens")


def row_json(rank: int, r: GlitchRow) -> dict:
    return {"rank": rank, "id": r.id, "token": token_text(r.token), "bytes": r.token.hex(), "score": r.score,
            "reason": r.reason or None, "count": r.count, "merge": r.rank, "expected": round(r.expected, 3),
            "reach": r.reach, "rarity": r.rarity, "absorbed": r.absorbed, "familiarity": r.familiarity,
            "encodes_to": list(r.ids), "why": why_text(r)}


def _weights(args: argparse.Namespace, tok, rows: list[GlitchRow]):
    """(rows ranked by both pieces of evidence, their `WeightColumns`, the evidence), or the rows
    as they are without ``--weights``."""
    if not args.weights:
        if args.unused_ids:
            raise TokvizError("--unused-ids needs --weights (the model's weights file)")
        return rows, None, None
    import numpy as np

    from tokviz.core.weights import WeightColumns, open_weights, parse_id_ranges, weight_evidence

    weights = open_weights(args.weights)
    reference = parse_id_ranges(args.unused_ids, weights.n_rows) if args.unused_ids else None
    evidence = weight_evidence(weights, tokenizer=tok, reference=reference, progress=_progress(sys.stderr))
    cols = WeightColumns.of(evidence, np.fromiter((r.id for r in rows), np.int64, len(rows)),
                            np.fromiter((r.score for r in rows), np.float64, len(rows)))
    order = cols.order()
    ranked = WeightColumns(*(None if a is None else a[order] for a in (
        cols.ids, cols.indicator, cols.cosine, cols.cosine_no_pc, cols.unembedding_norm, cols.embedding_norm,
        cols.weight_rank, cols.combined, cols.reference)))
    return [rows[i] for i in order.tolist()], ranked, evidence


def _corpus(args: argparse.Namespace) -> list[str]:
    texts, left = [], args.max_chars
    for path in args.corpus or ():
        if left <= 0:
            break
        text = read_text_head(path, left, errors=args.encoding_errors)
        texts.append(text)
        left -= len(text)
    return texts


def _progress(stream):
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return lambda what, fraction: None

    def show(what: str, fraction: float) -> None:
        stream.write(f"\r\x1b[2K{what} {fraction:.0%}")
        stream.flush()
    return show


def run_glitch(args: argparse.Namespace, read_model) -> int:
    timeline = read_model(args.model, args.pattern)
    texts = _corpus(args)
    tok = timeline.tokenizer()
    report = glitch_report(tok, texts[0] if len(texts) == 1 else texts, progress=_progress(sys.stderr))
    all_rows, cols, evidence = _weights(args, tok, report.rows)
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[2K")
    if evidence is not None:
        report = dataclasses.replace(report, rows=all_rows)
    rows = report.rows if args.top == 0 else report.rows[:args.top]
    if args.format == "report":
        sys.stdout.write(markdown_report(report, model=args.model, top=len(rows),
                                         weights_note=evidence.note() if evidence is not None else None))
        return 0
    if args.format == "json":
        c = report.coverage
        json.dump({"model": args.model, "n_tokens": report.n_tokens, "n_unreachable": report.n_unreachable,
                   "n_unused": report.n_unused, "corpus_chars": c.corpus_chars, "corpus_tokens": c.corpus_tokens,
                   "n_seen": c.n_seen, "too_small": c.too_small, "coverage_note": c.note(),
                   **({} if evidence is None else {"weights": _evidence_json(evidence)}),
                   "rows": [{**row_json(k, r), **({} if cols is None else cols.row(k - 1))}
                            for k, r in enumerate(rows, 1)]}, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(report.coverage.note())
    if evidence is not None:
        print(f"Weights: {evidence.note()}")
    head = f"{'rank':>4} {'id':>7} {'score':>7} {'count':>8}  "
    print(head + (f"{'indic.':>8} {'cos':>6} {'|out|':>7} {'|in|':>7} {'comb.':>7}  " if cols is not None else "")
          + f"{'token':<24} why")
    for k, r in enumerate(rows, 1):
        weights = "" if cols is None else _weight_cells(cols, k - 1)
        print(f"{k:>4} {r.id:>7} {r.score:>7.3f} {r.count:>8,}  {weights}"
              f"{json.dumps(token_text(r.token), ensure_ascii=False)[1:-1]:<24} {why_text(r)}")
    return 0


def _weight_cells(cols, k: int) -> str:
    def cell(a, width: int, fmt: str) -> str:
        return f"{'':>{width}}" if a is None else f"{a[k]:>{width}{fmt}}"

    return (f"{cell(cols.indicator, 8, '.3f')} {cell(cols.cosine, 6, '.2f')} {cell(cols.unembedding_norm, 7, '.3f')} "
            f"{cell(cols.embedding_norm, 7, '.3f')} {cell(cols.combined, 7, '.1f')}  ")


def _evidence_json(evidence) -> dict:
    return {"source": evidence.source, "rows": evidence.n_rows, "dim": evidence.dim, "dtype": evidence.dtype,
            "tied": evidence.tied, "indicator": evidence.indicator_name, "reference_ids": evidence.reference.tolist(),
            "reference": evidence.reference_note, "note": evidence.note()}
