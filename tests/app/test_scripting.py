"""The scripting surface is a façade apart from the window, made last from complete parts, and the
window's controllers get typed dependencies explicitly (never the window as a service locator)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import tokviz.app
from tokviz.app.main_window import MainWindow
from tokviz.app.scripting import Scripting, ScriptParts
from tokviz.core import TrainSettings

APP = Path(tokviz.app.__file__).parent
WINDOW_TYPES = {"MainWindow", "QMainWindow"}


def controller_parameter_problems(app: Path = APP) -> list[str]:
    """``module:Class.param`` for every parameter of an ``__init__`` in `app` (the command line
    aside: it has no window) that has no type, or is the window: named ``window`` or typed as a
    (Q)MainWindow."""
    problems = []
    for path in sorted(app.rglob("*.py")):
        if "cli" in path.relative_to(app).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
                    continue
                a = item.args
                for arg in a.posonlyargs + a.args + a.kwonlyargs:
                    if arg.arg == "self":
                        continue
                    where = f"{path.relative_to(app)}:{node.name}.{arg.arg}"
                    names = {n.id for n in ast.walk(arg.annotation) if isinstance(n, ast.Name)} \
                        if arg.annotation is not None else set()
                    if arg.annotation is None:
                        problems.append(f"{where}: no type")
                    elif names & WINDOW_TYPES or arg.arg == "window":
                        problems.append(f"{where}: the window")
    return problems


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


def test_controllers_take_typed_parts_never_the_window():
    assert controller_parameter_problems() == []


def test_the_parameter_check_sees_untyped_parameters_and_the_window(tmp_path):
    (tmp_path / "ops.py").write_text(
        "class A:\n    def __init__(self, frame: QMainWindow, parts: Parts) -> None: ...\n"
        "class B:\n    def __init__(self, script, *, parent: QObject | None = None) -> None: ...\n"
        "class C:\n    def __init__(self, window: QWidget) -> None: ...\n")
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "out.py").write_text("class Out:\n    def __init__(self, stream) -> None: ...\n")
    assert controller_parameter_problems(tmp_path) == [
        "ops.py:A.frame: the window", "ops.py:B.script: no type", "ops.py:C.window: the window"]


def test_the_scripting_surface_is_made_from_complete_parts(window):
    """Nothing of `Scripting` is filled in after it is made: its parts are frozen and all there."""
    assert dataclasses.is_dataclass(ScriptParts) and ScriptParts.__dataclass_params__.frozen
    fields = dataclasses.fields(ScriptParts)
    assert [f.name for f in fields if f.default is not dataclasses.MISSING] == []
    assert [f.name for f in fields if getattr(window.script.parts, f.name) is None] == []


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
