"""``tokviz diff A B [-f FILE] [--fuzz N] [--seed S] [--json]``: the first text on which two
tokenizers give different ids (`tokviz.core.parity`), shrunk to a minimal one, with the first
pipeline stage that differs and both Why traces.

A and B are anything ``tokviz encode`` opens; ``MODEL@K`` is a model at step K (as in ``tokviz
compare``), so one file at two steps compares the steps. The lines of ``-f FILE`` are checked
first, then ``--fuzz N`` generated texts (1000 when neither is given). Exit status: 0 when no
difference is found, 1 when one is, 2 on an error (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys

from tokviz.core.parity import IGNORABLE, Side, as_json, find_difference, report_lines
from tokviz.core.text.corpus import read_text

from .compare import model_specs

EXIT_DIFFERENT = 1
DEFAULT_FUZZ = 1000


def add_diff_arguments(d: argparse.ArgumentParser, whole_number) -> None:
    """``tokviz diff``'s arguments (`tokviz.app.cli.parser` makes its parser)."""
    d.add_argument("a", metavar="A", help="a model or tokenizer (anything tokviz encode takes); A@K: its step K")
    d.add_argument("b", metavar="B", help="the other one (or A@K: the same file at another step)")
    d.add_argument("-f", "--file", metavar="FILE", help="check the lines of this UTF-8 file first")
    d.add_argument("--fuzz", type=whole_number, metavar="N",
                   help=f"then check N generated texts (default {DEFAULT_FUZZ} without -f, else 0)")
    d.add_argument("--seed", type=whole_number, default=0, metavar="S", help="seed of the generated texts (default 0)")
    d.add_argument("--ignore", action="append", choices=IGNORABLE, default=[], metavar="STAGE",
                   help="leave a stage's own output out: bos_eos (compare the text's ids only) or decoder "
                        "(do not compare decoded text); repeatable")
    d.add_argument("--specials-as-text", action="store_true", help="encode special-token text as ordinary text")
    d.add_argument("--pattern", metavar="REGEX", help="split pattern of a .tiktoken file tokviz does not know")
    d.add_argument("--json", action="store_true",
                   help="one JSON object: input, ids_a, ids_b, stage, checked (input null: no difference)")
    d.epilog = "Exit status: 0 no difference found, 1 a difference found, 2 an error."


def run_diff(args: argparse.Namespace, read_model, usage_error: type[Exception]) -> int:
    """``tokviz diff``; `read_model(path, pattern)` opens a MODEL as ``tokviz encode`` does."""
    lines = read_text(args.file, allow_empty=True).splitlines() if args.file is not None else []
    fuzz = args.fuzz if args.fuzz is not None else (0 if args.file is not None else DEFAULT_FUZZ)
    specs = model_specs([args.a, args.b], None, read_model, args.pattern)
    sides = [Side(spec.label, spec.open(), spec.step, args.specials_as_text) for spec in specs]
    for side in sides:
        if side.step is not None and side.step > side.timeline.last_step:
            from tokviz.core.registry import step_noun

            noun = step_noun(side.timeline, 1)
            raise usage_error(f"tokviz diff: {side.label}: step {side.step} is past the last {noun} ({side.timeline.last_step})")
    result = find_difference(*sides, lines=lines, fuzz=fuzz, seed=args.seed, ignore=args.ignore)
    if args.json:
        sys.stdout.write(json.dumps(as_json(result), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("\n".join(report_lines(result)) + "\n")
    return 0 if result.difference is None else EXIT_DIFFERENT
