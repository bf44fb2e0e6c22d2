"""``tokviz train --algorithm bpe|wordpiece|unigram``: the options every algorithm declares.

`add_algorithm_options` adds the algorithm choice and every setting the algorithms declare (one
declaration each, on the settings dataclass: `tokviz.core.algorithm.options`); `train_settings`
turns parsed arguments into the chosen algorithm's settings, refusing (with a one-line
`UsageError`) options it does not have.

What this leaves out: the rest of the command line (``tokviz.app.cli.main``), the merges listing
(``tokviz.app.cli.merges``).
"""

from __future__ import annotations

import argparse

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


def _names(names: list[str]) -> str:
    """``bpe``, ``bpe and unigram``, ``bpe, superbpe and unigram``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _help(declarations: list[tuple[str, str, Option]]) -> str:
    """One help text for a flag: its meaning and default, each algorithm named where they differ.

    ``--split``: ``how the corpus is cut ... (default: bpe gpt4; wordpiece and unigram whitespace)``."""
    parts: dict[str, list[tuple[str, str]]] = {}  # help text -> [(algorithm, its default shown), ...]
    for algo, field_name, o in declarations:
        default = SPECS[algo].settings_type.__dataclass_fields__[field_name].default
        shown = o.unset if default is None or default == () else str(default)
        parts.setdefault(o.help, []).append((algo, shown))
    named = len(parts) > 1 or len(declarations) < len(ALGORITHMS)  # say which algorithms a text is for
    texts = []
    for text, defaults in parts.items():
        by_value: dict[str, list[str]] = {}
        for algo, shown in defaults:
            by_value.setdefault(shown, []).append(algo)
        if len(by_value) == 1:
            text += f" (default {next(iter(by_value))})"
        else:
            text += " (default: " + "; ".join(f"{_names(a)} {v}" for v, a in by_value.items()) + ")"
        texts.append(f"{_names([a for a, _ in defaults])}: {text}" if named else text)
    return "; ".join(texts)


def add_algorithm_options(t: argparse.ArgumentParser) -> None:
    """``--algorithm`` and every declared setting of every algorithm, generated from the
    declarations (`tokviz.core.algorithm.options`); every default is None: "not given", so the
    chosen algorithm's own default applies."""
    t.add_argument("--algorithm", choices=ALGORITHMS, default=ALGORITHMS[0],
                   help="; ".join(f"{name}: {spec.tip}" for name, spec in SPECS.items())
                   + f" (default {ALGORITHMS[0]})")
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
            algos = _names([algo for algo, _, _ in declarations])
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
