"""The registry lists every algorithm without loading one: settings and names at once, trainers on use."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import import_module

import pytest

from tokviz.core.registry import SPECS, Later, spec_of, spec_with_format

# builds the train command's options (what `tokviz train --help` shows) and reads every name
PROBE = """
import argparse, json, sys
from tokviz.app.cli.algorithms import add_algorithm_options
from tokviz.core.registry import SPECS, spec_with_format
add_algorithm_options(argparse.ArgumentParser())
assert all(spec_with_format(s.format_name) is s for s in SPECS.values())
names = [s.title + s.tip + s.step_noun for s in SPECS.values()]
heavy = sorted(m for m in sys.modules if m == "numpy" or m.endswith((".timeline", ".trainer", ".model_file")))
print(json.dumps(heavy))
"""


def test_listing_every_algorithm_loads_no_trainer_and_no_numpy(tmp_path):
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


@pytest.mark.parametrize("name", SPECS)
def test_each_spec_names_the_classes_and_functions_of_its_modules(name):
    spec = SPECS[name]
    training, timeline_type = spec.training_type, spec.timeline_type  # imported here if not yet
    timeline = sys.modules[spec.timeline_module]
    assert training is getattr(timeline, spec.training_name) and timeline_type is getattr(timeline, spec.timeline_name)
    assert spec.settings_type.__module__.endswith(".settings")
    module, _, _ = spec.to_json.where.partition(":")
    assert import_module(module).FORMAT_NAME == spec.format_name  # what files of this format say
    for later in (spec.to_json, spec.from_json, spec.warm_up):
        if later is not None:
            module, _, attr = later.where.partition(":")
            assert callable(getattr(import_module(module), attr)), later.where


def test_a_timeline_is_its_own_algorithms_even_when_built_on_another():
    from tokviz.core.superbpe.settings import SuperBpeSettings
    from tokviz.core.superbpe.timeline import SuperBpeTraining

    tl = SuperBpeTraining(SuperBpeSettings(merges=3, transition=1), texts=["hug hug pug pug hugs"]).run()
    assert spec_of(tl) is SPECS["superbpe"] and spec_of(tl.settings) is SPECS["superbpe"]
    assert spec_of(object()) is None and spec_with_format("tokviz-model") is SPECS["bpe"]


def test_a_later_function_is_imported_when_called(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    later = Later("colorsys:rgb_to_hsv")
    assert "colorsys" not in sys.modules
    assert later(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0) and "colorsys" in sys.modules


@pytest.mark.parametrize("name", SPECS)
def test_each_spec_says_whether_pieces_train_alike_as_its_training_does(name):
    assert SPECS[name].pieces_train_alike == SPECS[name].training_type.pieces_train_alike
