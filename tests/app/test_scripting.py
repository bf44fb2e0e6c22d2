"""The scripting surface is a façade apart from the window, and the window's controllers get their
dependencies explicitly (never the window as a service locator)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import tokviz.app
from tokviz.app.main_window import MainWindow
from tokviz.app.scripting import Scripting
from tokviz.core import TrainSettings

APP = Path(tokviz.app.__file__).parent
# the window's own parts: its menus and actions, and its docks, are made on the window itself
FRAME_PARTS = {"WindowActions", "DockManager"}


def scripting_calls() -> set[str]:
    return {n for n, v in vars(Scripting).items() if not n.startswith("_") and n != "parts"}


def test_the_window_does_not_carry_the_scripting_surface():
    calls = scripting_calls()
    assert {"open_path", "start_training", "wait_for_training", "open_tokenizer", "start_lesson",
            "enter_presenter", "export_animation", "save_session"} <= calls
    on_window = sorted(n for n in calls if n in vars(MainWindow))
    assert on_window == []


def test_every_scripting_call_is_documented_in_the_module():
    doc = inspect.getmodule(Scripting).__doc__
    assert [n for n in sorted(scripting_calls()) if f"``{n}" not in doc] == []


def test_controllers_do_not_take_the_window():
    offenders = []
    for path in sorted(APP.rglob("*.py")):
        if path.name == "main_window.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name not in FRAME_PARTS:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        names = [a.arg for a in item.args.args + item.args.kwonlyargs]
                        if "window" in names:
                            offenders.append(f"{path.relative_to(APP)}:{node.name}")
    assert offenders == []


def test_a_script_trains_saves_and_reopens_a_model(window, tmp_path):
    script = window.script
    assert script.load_sample("english-prose")
    assert script.start_training(TrainSettings(merges=25))
    assert script.wait_for_training(60_000) == "finished" == script.last_outcome
    assert script.timeline.n_steps == 25 and script.step_model.step == 25
    assert script.save_model(tmp_path / "m.json")
    script.step_model.set_timeline(None)
    assert script.open_path(tmp_path / "m.json") and script.wait_for_file() == "opened"
    assert script.timeline.n_steps == 25
    assert script.select_panel("timeline") is script.panel("timeline")
