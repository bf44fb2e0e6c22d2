"""``tokviz train --algorithm bpe|wordpiece|unigram`` and ``tokviz merges`` for every algorithm.

`add_algorithm_options` adds the algorithm choice and every setting the algorithms declare (one
declaration each, on the settings dataclass: `tokviz.core.algorithm.options`); `train_settings`
turns parsed arguments into the chosen algorithm's settings, refusing (with a one-line
`UsageError`) options it does not have; `write_steps` prints the merges of a BPE or WordPiece
model, or the rounds of a Unigram one.

What this leaves out: the rest of the command line (``tokviz.app.cli.main``).
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from tokviz.core.algorithm.options import Option, option_named, options_of
from tokviz.core.registry import ALGORITHMS, SPECS

from .arguments import number, whole_number


def declared_options() -> dict[str, list[tuple[str, str, Option]]]:
    """Every declared setting of every algorithm by CLI attribute: ``[(algorithm, field name,
    declaration), ...]`` in the registry's order."""
    found: dict[str, list[tuple[str, str, Option]]] = {}
    for name, spec in SPECS.items():
        for field_name, o in options_of(spec.settings_type):
            found.setdefault(o.dest, []).append((name, field_name, o))
    return found


def _help(declarations: list[tuple[str, str, Option]]) -> str:
    """One help text for a flag: each algorithm's meaning and default, grouped when they agree."""
    parts: dict[str, list[str]] = {}
    for algo, field_name, o in declarations:
        default = SPECS[algo].settings_type.__dataclass_fields__[field_name].default
        shown = "" if default is None or default == () or o.kind == "tokens" else f" (default {default})"
        parts.setdefault(o.help + shown, []).append(algo)
    if len(parts) == 1 and len(declarations) == len(ALGORITHMS):
        return next(iter(parts))
    return "; ".join(f"{' and '.join(algos)}: {text}" for text, algos in parts.items())


def add_algorithm_options(t: argparse.ArgumentParser) -> None:
    """``--algorithm`` and every declared setting of every algorithm, generated from the
    declarations (`tokviz.core.algorithm.options`); every default is None: "not given", so the
    chosen algorithm's own default applies."""
    t.add_argument("--algorithm", choices=ALGORITHMS, default=ALGORITHMS[0],
                   help="; ".join(f"{name}: {spec.tip}" for name, spec in SPECS.items()))
    groups: dict[str, argparse.ArgumentParser] = {}  # exclusive group name -> its argparse group
    for declarations in declared_options().values():
        o = declarations[0][2]
        where = t
        if o.exclusive is not None:
            if o.exclusive not in groups:
                groups[o.exclusive] = t.add_mutually_exclusive_group()
            where = groups[o.exclusive]
        help_text = _help(declarations).replace("%", "%%")
        if o.kind == "tokens":
            where.add_argument(o.flag, action="append", default=[], metavar=o.metavar, help=help_text)
        elif o.kind == "choice":
            where.add_argument(o.flag, choices=o.choices, help=help_text)
        else:
            kind = {"int": whole_number, "float": number, "str": str}[o.kind]
            where.add_argument(o.flag, type=kind, metavar=o.metavar, help=help_text)


def train_settings(args: argparse.Namespace, usage_error: type[Exception]):
    """The settings object of ``args.algorithm`` from the declared options given; `usage_error`
    for options it does not have."""
    spec = SPECS[args.algorithm]
    given = {}
    # the options fewest algorithms have are named first when several do not apply
    for dest, declarations in sorted(declared_options().items(), key=lambda item: len(item[1])):
        value = getattr(args, dest, None)
        if value is None or value == []:
            continue
        declared = option_named(spec.settings_type, dest)
        if declared is None:
            algos = " and ".join(algo for algo, _, _ in declarations)
            raise usage_error(f"tokviz train: {declarations[0][2].flag} applies to {algos} only, "
                              f"not --algorithm {args.algorithm}")
        name, o = declared
        if o.kind == "tokens":
            value = tuple(value)
        elif o.none_text is not None and value == o.low:  # the form's "not set" (e.g. an automatic seed size)
            value = None
        given[name] = value
    if "word_counts" in spec.settings_type.__dataclass_fields__:  # recorded with the timeline
        given["word_counts"] = args.word_counts
    return spec.settings_type(**given).validate()


def write_steps(timeline, out: TextIO, *, as_json: bool, format_token) -> None:
    """``tokviz merges``: one line per merge (BPE, WordPiece: with its score) or per Unigram round."""
    if not timeline.lists_merges:  # Unigram: rounds that prune pieces
        for r in timeline.rounds:
            if as_json:
                out.write(json.dumps({
                    "round": r.index, "vocab_size": r.vocab_size, "log_likelihood": r.log_likelihood,
                    "viterbi_tokens": r.viterbi_tokens,
                    "pruned": [{"piece": p.piece, "loss": p.loss, "freq": p.freq, "alternative": list(p.alternative)}
                               for p in r.pruned],
                }, ensure_ascii=False) + "\n")
            else:
                shown = " ".join(format_token(p.piece.encode()) for p in r.pruned[:8])
                more = f" (+{len(r.pruned) - 8} more)" if len(r.pruned) > 8 else ""
                out.write(f"{r.index}\t{r.vocab_size}\t{r.log_likelihood:.1f}\t{len(r.pruned)}\t{shown}{more}\n")
        return
    vocab = timeline.token_bytes()
    wordpiece = timeline.has_scores
    for s in timeline.steps:
        a, b = s.pair
        if as_json:
            d = {"rank": s.rank, "pair": [a, b], "id": s.id, "pair_hex": [vocab[a].hex(), vocab[b].hex()],
                 "token_hex": s.token.hex(), "count": s.count}
            if wordpiece:
                d.update(score=s.score, left_count=s.left_count, right_count=s.right_count)
            out.write(json.dumps(d) + "\n")
        else:
            extra = f"\t{s.score:.6g}" if wordpiece else ""
            out.write(f"{s.rank}\t{s.id}\t{format_token(vocab[a])}\t{format_token(vocab[b])}\t{s.count}{extra}\n")
