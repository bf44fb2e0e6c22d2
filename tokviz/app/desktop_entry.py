"""``tokviz --install-desktop-entry`` / ``--uninstall-desktop-entry``: tokviz in the desktop's menu.

Writes a freedesktop.org desktop entry (``applications/tokviz.desktop``, launching this very
``tokviz`` with a file, if any) and the scalable icon (``icons/hicolor/scalable/apps/tokviz.svg``)
into ``$XDG_DATA_HOME`` (default ``~/.local/share``): no root, nothing outside the user's folders.
The window names itself ``tokviz`` (``setDesktopFileName``), so the desktop matches it to this
entry and shows the icon. Uninstalling removes exactly those two files. No Qt here.

What this leaves out: menus on macOS and Windows (a bundle or shortcut is their installer's job).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from tokviz.core.io.safe_files import write_atomic

DESKTOP_FILE = "tokviz.desktop"
ICON_FILE = "tokviz.svg"


def data_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` when it is unset or not absolute (the spec's rule)."""
    env = os.environ if env is None else env
    value = env.get("XDG_DATA_HOME", "")
    return Path(value) if value and os.path.isabs(value) else Path.home() / ".local" / "share"


def entry_paths(env: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """(the .desktop file, the icon) under `data_home`."""
    home = data_home(env)
    return home / "applications" / DESKTOP_FILE, home / "icons" / "hicolor" / "scalable" / "apps" / ICON_FILE


def quote_exec_arg(arg: str) -> str:
    r"""One argument of an ``Exec=`` line, quoted when needed (Desktop Entry spec, "The Exec key":
    the quoting escapes, then the string escapes, so a literal backslash is written four times).

    >>> print(quote_exec_arg("/usr/bin/tokviz"), quote_exec_arg('/home/a b/"x"/$HOME/100%'))
    /usr/bin/tokviz "/home/a b/\\"x\\"/\\$HOME/100%%"
    """
    if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`='):
        return arg.replace("%", "%%")  # a literal % is doubled everywhere (field codes are %f, %u, ...)
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'.replace("%", "%%").replace("\\", "\\\\")


def launch_command() -> list[str]:
    """How this tokviz is started: its ``tokviz`` script, else ``python -m tokviz``."""
    script = shutil.which("tokviz", path=str(Path(sys.executable).parent)) or shutil.which("tokviz")
    if script:
        return [str(Path(script).absolute())]
    return [sys.executable, "-m", "tokviz"]


def desktop_entry(command: list[str]) -> str:
    """The text of tokviz.desktop for `command` (a file to open is appended as ``%f``)."""
    exec_line = " ".join(quote_exec_arg(a) for a in command)
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.5",
        "Name=tokviz",
        "GenericName=Tokenizer Visualizer",
        "Comment=See how tokenizers work: train BPE step by step, replay merges, colour tokens",
        f"Exec={exec_line} %f",
        "Icon=tokviz",
        "Terminal=false",
        "Categories=Education;Science;ComputerScience;Development;",
        "Keywords=tokenizer;BPE;WordPiece;Unigram;tiktoken;NLP;",
        "StartupWMClass=tokviz",
        "",
    ])


def install_desktop_entry(env: Mapping[str, str] | None = None, command: list[str] | None = None) -> list[Path]:
    """Write the desktop entry and its icon; returns the files written."""
    desktop, icon = entry_paths(env)
    for folder in (desktop.parent, icon.parent):
        folder.mkdir(parents=True, exist_ok=True)
    svg = resources.files("tokviz.resources").joinpath("icons", ICON_FILE).read_bytes()
    write_atomic(icon, svg)
    write_atomic(desktop, desktop_entry(command or launch_command()).encode("utf-8"))
    return [desktop, icon]


def uninstall_desktop_entry(env: Mapping[str, str] | None = None) -> list[Path]:
    """Remove the desktop entry and the icon; returns the files that were there."""
    removed = []
    for path in entry_paths(env):
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            pass
    return removed
