"""``tokviz --help`` and ``--version`` start as fast as argparse allows: they load the top-level
parser and nothing of any command (no command module, no trainer, no numpy, no Qt), checked in a
fresh interpreter that runs the real entry point. A new command module is covered without
touching this test: every module of ``tokviz.app.cli`` but the dispatcher's own is a command's."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import tokviz.app.cli as cli_package

# what parsing the top level needs: the entry point, the dispatcher, the parsers and their helpers
DISPATCHER = {"entry", "main", "parser", "arguments", "messages"}
COMMAND_MODULES = sorted(f"tokviz.app.cli.{m.name}" for m in pkgutil.iter_modules(cli_package.__path__)
                         if m.name not in DISPATCHER)
HEAVY = ["numpy", "regex", "jinja2", "PySide6", "tokviz.core.registry", "tokviz.app.gui", "tokviz.engine"]

PROBE = r"""
import sys
from tokviz.app.cli.main import main
try:
    code = main({argv!r})
except SystemExit as done:  # argparse's --help and --version
    code = done.code
print("exit", code)
print("loaded", [m for m in {watched!r} if m in sys.modules])
"""


def run_probe(tmp_path, argv: list[str]) -> list[str]:
    """The lines a fresh interpreter prints after `main(argv)`: its output, then its exit status
    and the watched modules it loaded."""
    probe = PROBE.format(argv=argv, watched=COMMAND_MODULES + HEAVY)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_load_no_command_module(tmp_path, flag):
    assert len(COMMAND_MODULES) >= 10  # the list is found, not empty
    lines = run_probe(tmp_path, [flag])
    assert lines[-2:] == ["exit 0", "loaded []"]
    if flag == "--version":
        assert lines[0].startswith("tokviz ")
    else:
        assert "commands:" in lines and any(line.split()[:1] == ["glitch"] for line in lines)


@pytest.mark.parametrize(("command", "own"), [("merges", []), ("chat", ["tokviz.app.cli.chat"])])
def test_a_commands_help_loads_its_own_module_only(tmp_path, command, own):
    """``tokviz merges --help`` builds one parser and loads no command module; ``tokviz chat --help``
    loads the chat command's arguments, not the chat machinery (Jinja, numpy, the tokenizers)."""
    lines = run_probe(tmp_path, [command, "--help"])
    assert lines[0].startswith(f"usage: tokviz {command}") and lines[-2:] == ["exit 0", f"loaded {own}"]
