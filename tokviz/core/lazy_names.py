"""`lazy_names`: a package's public names imported from their modules when first used (PEP 562).

A command that needs one submodule does not load every other one (numpy, the trainers, ...).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for `package`: `where` maps each name to the module (relative to the
    package) that defines it; a name is imported on first use and kept in the package afterwards."""

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(sys.modules[package], name, value)  # once: later lookups are ordinary
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
