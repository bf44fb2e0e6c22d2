"""The window's start: the core it needs is imported before Qt (`tokviz.app.gui.WINDOW_CORE`).

Once PySide6 is loaded, its import hook reads the source of every module an import names; the core
the first screen uses (about 200 modules) is imported before it, so that a module moved out of the
list's reach (a lazier registry, a new import) shows here instead of as a slower launch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tokviz.app.gui import WINDOW_CORE

LAUNCH = """
import json, os, sys
import tokviz.app.gui as gui

create = gui.create_main_window

def probed(*args, **kwargs):
    window = create(*args, **kwargs)  # built and shown: what the first screen imported is in
    print(json.dumps(list(sys.modules)))  # in import order
    sys.stdout.flush()
    os._exit(0)

gui.create_main_window = probed
sys.argv = ["tokviz"]
from tokviz.app.cli.entry import run
run()
"""
CORE = ("tokviz.core", "numpy", "regex")


def test_the_core_the_first_screen_uses_is_imported_before_qt(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOKVIZ_", "XDG_"))}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               TOKVIZ_SETTINGS_FILE=str(tmp_path / "settings.ini"))
    out = subprocess.run([sys.executable, "-c", LAUNCH], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    qt = modules.index("PySide6.QtCore")
    before = [m for m in modules[:qt] if m.startswith(CORE)]
    after = [m for m in modules[qt:] if m.startswith(CORE)]
    assert len(before) > 150 and set(WINDOW_CORE) <= set(before)
    assert len(after) <= 5, f"imported after Qt (add their importers to WINDOW_CORE): {after}"
