"""Measuring the package's structure from its source with `ast` alone (nothing is imported).

Used by `test_structure.py` (the rules) and runnable as ``python tests/structure.py`` to print the
figures: modules per folder, import cycles, largest modules, algorithm-name switches, accesses to
other modules' private names. Leaves out tests, resources and anything outside ``tokviz/``.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tokviz"
STDLIB_PRIVATE = {"_exit", "_getframe", "_current_frames", "_asdict", "_replace", "_fields", "_make"}  # documented API
QT_PREFIXES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6")


@dataclass
class Module:
    """One source file: its dotted name, path, syntax tree and whether it is a package."""

    name: str
    path: Path
    tree: ast.Module
    is_package: bool
    lines: int = 0
    imports: set[str] = field(default_factory=set)  # dotted names of tokviz modules it imports
    external: set[str] = field(default_factory=set)  # top-level names of other packages it imports

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def load_modules(package: Path = PACKAGE) -> dict[str, Module]:
    """Every module under `package`, keyed by dotted name, with its imports resolved."""
    modules: dict[str, Module] = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        text = path.read_text(encoding="utf-8")
        modules[".".join(parts)] = Module(".".join(parts), path, ast.parse(text), is_package,
                                          lines=text.count("\n") + (not text.endswith("\n")))
    for module in modules.values():
        _resolve_imports(module, modules)
    return modules


def _resolve_imports(module: Module, modules: dict[str, Module]) -> None:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _add(module, alias.name, modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                _add(module, sub if sub in modules else target, modules)


def _add(module: Module, target: str, modules: dict[str, Module]) -> None:
    if target.split(".")[0] != "tokviz":
        module.external.add(target.split(".")[0])
        return
    while target and target not in modules:
        target = target.rpartition(".")[0]
    if target and target != module.name:
        module.imports.add(target)


def import_cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan), each sorted; sorted by size."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in modules[v].imports:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for name in modules:
        if name not in index:
            visit(name)
    return sorted(groups, key=lambda g: (-len(g), g))


def modules_per_folder(modules: dict[str, Module]) -> dict[str, int]:
    """Folder (dotted package) -> number of modules in it, ``__init__`` not counted."""
    counts: dict[str, int] = defaultdict(int)
    for m in modules.values():
        if not m.is_package:
            counts[m.package] += 1
    return dict(sorted(counts.items()))


ALGORITHM_NAMES = {"bpe", "wordpiece", "unigram", "pretrained"}


def algorithm_switches(modules: dict[str, Module], names: Collection[str] = ALGORITHM_NAMES) -> list[tuple[str, int]]:
    """Places that compare something with an algorithm's name (``x.algorithm == "bpe"``,
    ``a in ("wordpiece", "unigram")``, ``getattr(tl, "algorithm", "bpe") == ...``), or with one
    of other `names` (the keys of another registry)."""
    found = []
    for m in modules.values():
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.Compare) or not any(
                    isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
                continue
            for side in [node.left, *node.comparators]:
                values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                if any(isinstance(v, ast.Constant) and v.value in names for v in values):
                    found.append((m.name, node.lineno))
                    break
    return found


def _names_defined(tree: ast.Module) -> set[str]:
    """Every name a module defines: functions, classes, assigned names and attributes, parameters."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_accesses(modules: dict[str, Module]) -> list[tuple[str, int, str]]:
    """Uses of another module's private names: ``obj._name`` (not ``self``/``cls``) where this module
    defines no ``_name``, and ``from x import _name``. (module, line, name)."""
    found = []
    for m in modules.values():
        defined = _names_defined(m.tree)
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if own or node.attr in defined or node.attr in STDLIB_PRIVATE:
                    continue
                found.append((m.name, node.lineno, node.attr))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if _private(alias.name):
                        found.append((m.name, node.lineno, alias.name))
    return found


def qt_imports_in(modules: dict[str, Module], prefix: str) -> list[str]:
    """Modules under `prefix` that import a Qt binding or pyqtgraph."""
    return sorted(m.name for m in modules.values()
                  if m.name.startswith(prefix) and m.external & set(QT_PREFIXES))


def iter_sleeps(tests: Path = ROOT / "tests") -> Iterator[tuple[Path, int]]:
    """Fixed ``qtbot.wait(...)`` sleeps in the tests (``waitSignal``/``waitUntil`` are not sleeps)."""
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "wait" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "qtbot"):
                yield path, node.lineno


def report() -> str:
    """The figures, as text."""
    modules = load_modules()
    out = ["modules per folder:"]
    out += [f"  {k:<28} {v}" for k, v in modules_per_folder(modules).items()]
    cycles = import_cycles(modules)
    out.append(f"import cycles: {len(cycles)}")
    out += ["  " + " <-> ".join(g) for g in cycles]
    largest = sorted(modules.values(), key=lambda m: -m.lines)[:5]
    out.append("largest modules: " + ", ".join(f"{m.name} ({m.lines})" for m in largest))
    switches = algorithm_switches(modules)
    out.append(f"algorithm-name switches: {len(switches)}")
    out += [f"  {n}:{line}" for n, line in switches]
    private = private_accesses(modules)
    out.append(f"private names used across modules: {len(private)}")
    out += [f"  {n}:{line} {name}" for n, line, name in private]
    out.append(f"qtbot.wait sleeps in tests: {len(list(iter_sleeps()))}")
    return "\n".join(out)


if __name__ == "__main__":
    print(report())
