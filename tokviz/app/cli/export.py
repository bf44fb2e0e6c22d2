"""``tokviz export MODEL -o OUT [--format hf|tiktoken] [--step K]``.

Writes a BPE model trained in tokviz as a Hugging Face ``tokenizer.json`` (``hf``) or as
``OUT`` (``.tiktoken`` ranks) plus ``NAME.tiktoken.json`` (split pattern and special tokens; NAME
is OUT without ``.tiktoken``) for ``tiktoken.Encoding``; the format defaults from OUT's
extension. The core refuses what has no exact form (WordPiece, Unigram, loaded tokenizers,
end-of-word markers, character units for tiktoken) with a one-line message, and any export onto
MODEL itself or over a file the command did not name; writes are atomic, so an error leaves no
file behind.
What this leaves out: the formats (`tokviz.core.saved.tokenizer_export`), the rest of the CLI.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tokviz.core.registry import step_noun
from tokviz.core.saved.tokenizer_export import EXPORT_FORMATS, check_export_targets, export_timeline

SUFFIX_FORMATS = {".json": "hf", ".tiktoken": "tiktoken"}


def add_export_arguments(x: argparse.ArgumentParser, positive) -> None:
    """``tokviz export``'s arguments (`tokviz.app.cli.parser` makes its parser)."""
    x.add_argument("model", metavar="MODEL", help="a BPE model trained in tokviz (tokviz train -o)")
    x.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    x.add_argument("--format", choices=EXPORT_FORMATS, dest="export_format",
                   help="hf (tokenizer.json) or tiktoken (OUT + NAME.tiktoken.json); default from OUT's extension")
    x.add_argument("--step", type=positive, metavar="K", help="export only the first K merges")


def run_export(args: argparse.Namespace, read_model, usage_error: type[Exception]) -> int:
    """Export ``args.model`` (read with `read_model`); `usage_error` for command-line mistakes."""
    out = Path(args.output)
    if out.is_dir():
        raise usage_error(f"tokviz export: output {out} is a folder; give a file name")
    if not out.parent.exists():
        raise usage_error(f"tokviz export: output folder {out.parent} does not exist")
    if not out.parent.is_dir():
        raise usage_error(f"tokviz export: {out.parent} is a file, not a folder")
    fmt = args.export_format or SUFFIX_FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise usage_error(f"tokviz export: cannot tell the format from {out.name!r}; "
                          f"give --format hf or --format tiktoken")
    check_export_targets(out, fmt, inputs=(args.model,))  # before reading: a mistake costs nothing
    timeline = read_model(args.model)
    if args.step is not None and args.step > timeline.n_steps:
        noun = step_noun(timeline, 1)
        raise usage_error(f"tokviz export: --step {args.step} is past the last {noun} ({timeline.n_steps})")
    done = export_timeline(timeline, out, fmt, step=args.step, inputs=(args.model,))  # TokvizError: one line, exit 2
    print(f"wrote {' and '.join(str(p) for p in done.files)}: {done.n_tokens:,} tokens, "
          f"{done.n_merges:,} merges")
    return 0
