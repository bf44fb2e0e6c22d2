"""The layer rule: tokviz.core (and the scripting CLI) never load Qt or pyqtgraph."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6")

PROBE = """
import json, sys
import {module}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
print(json.dumps({{"loaded": loaded, "core": "tokviz.core" in sys.modules}}))
"""


@pytest.mark.parametrize("module", ["tokviz.core", "tokviz.app.cli.main"])
def test_module_loads_no_qt(tmp_path, module):
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, forbidden=FORBIDDEN)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {"loaded": [], "core": True}


def test_core_public_names():
    import tokviz.core as core

    for name in ("BpeTokenizer", "Encoding", "MergeStep", "Timeline", "Training", "TrainSettings", "train",
                 "CharTokenizer", "WordTokenizer", "make_batch", "save_timeline", "load_timeline",
                 "parse_split", "read_text", "parse_word_counts", "count_chunks", "TokvizError"):
        assert name in core.__all__, name
