"""Child processes never import code planted where tokviz was started (a ``regex.py`` in the
working directory, or a folder named by PYTHONPATH)."""

from __future__ import annotations

import pytest

from tokviz.core.processes.spawn import ChildProcess

PLANTED = ("regex", "numpy", "tokviz", "pickle", "runpy")
CHILDREN = ("tokviz.engine.training.child", "tokviz.engine.heatmaps.embedding_child", "tokviz.engine.compare_child",
            "tokviz.core.chat.child")


@pytest.mark.parametrize("module", CHILDREN)
def test_children_ignore_modules_planted_in_the_working_directory(tmp_path, monkeypatch, module):
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "ran"
    for name in PLANTED:
        (planted / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    monkeypatch.chdir(planted)
    monkeypatch.setenv("PYTHONPATH", str(planted))
    child = ChildProcess(module)
    child.proc.stdin.close()  # no job: the child imports its modules, reads end of input and leaves
    child.proc.stdout.read()  # until it has gone
    child.proc.stdout.close()
    assert child.proc.wait(60) is not None
    assert not marker.exists(), f"planted code ran in the child: {marker.read_text()}"


def test_the_planted_module_would_run_without_isolation(tmp_path, monkeypatch):
    """The test above can fail: an ordinary ``python -m`` from that folder does import it."""
    import subprocess
    import sys

    marker = tmp_path / "ran"
    (tmp_path / "regex.py").write_text(f"open({str(marker)!r}, 'a').write('regex')\n")
    monkeypatch.chdir(tmp_path)
    subprocess.run([sys.executable, "-c", "import regex"], cwd=tmp_path, timeout=60, check=False)
    assert marker.exists()
