"""Each training setting declared once: its command-line flag, form label, range and help.

A settings dataclass marks the fields a user can set with `option(...)`; the CLI's ``train``
options and the training form's rows are generated from these declarations (`options_of`), so a
new setting, or a new algorithm's settings, appears in both without another table to edit.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo:
    ...     rounds: int = option(3, flag="--rounds", label="&Rounds:", help="how many rounds", low=1, high=9)
    ...     note: str = "internal"  # no option: neither a flag nor a row
    >>> [(name, o.flag, o.dest, o.kind) for name, o in options_of(Demo)]
    [('rounds', '--rounds', 'rounds', 'int')]

`row` says who draws a setting in the training form: ``"own"`` rows are generated from the
declaration (a spin box, or a combo box for choices); ``"panel"`` rows are the ones every
algorithm shares or that need a widget of their own (the split presets, the budget, the special
tokens, the end-of-word mark): the panel draws them and takes their label and help from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

Kind = Literal["int", "float", "str", "choice", "tokens"]


@dataclass(frozen=True)
class Option:
    """How one setting appears on the command line and in the training form."""

    flag: str  # "--seed-size"
    label: str  # "Seed si&ze:" (the form's label, with its keyboard mnemonic)
    help: str  # the CLI's help and the form's tooltip
    kind: Kind = "int"
    low: float | None = None  # the form's range (the settings' `validate` has the last word)
    high: float | None = None
    step: float | None = None  # the form's step for floats
    choices: tuple[str, ...] = ()  # kind "choice"
    none_text: str | None = None  # the form's text for "not set" (a None value), shown at `low`
    metavar: str = "N"
    row: Literal["own", "panel"] = "own"
    exclusive: str | None = None  # options of one group cannot be given together (the budget)
    unset: str = "none"  # what leaving the option out means, for a default of None or () (the CLI's help)

    @property
    def tooltip(self) -> str:
        """`help` as a sentence for a tooltip."""
        return self.help[:1].upper() + self.help[1:]

    @property
    def dest(self) -> str:
        """The parsed command line's attribute: ``--seed-size`` -> ``seed_size``."""
        return self.flag.lstrip("-").replace("-", "_")


def option(default, **declaration) -> dataclasses.Field:
    """A dataclass field whose default is `default`, declared as a user setting (`Option`)."""
    return dataclasses.field(default=default, metadata={"option": Option(**declaration)})


def options_of(settings_type: type) -> list[tuple[str, Option]]:
    """``(field name, Option)`` of every declared setting of a settings dataclass, in field order."""
    return [(f.name, f.metadata["option"]) for f in dataclasses.fields(settings_type) if "option" in f.metadata]


def option_named(settings_type: type, dest: str) -> tuple[str, Option] | None:
    """The declared setting of `settings_type` behind the CLI attribute `dest`, else None."""
    return next(((name, o) for name, o in options_of(settings_type) if o.dest == dest), None)
