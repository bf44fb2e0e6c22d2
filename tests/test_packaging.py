"""Every Python package under tokviz/ is listed in pyproject.toml (a plain, non-editable install
would silently leave an unlisted one out)."""

from __future__ import annotations

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "tokviz").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert "tokviz.resources" in listed


def _readme_block(title: str, *, nth: int = 0) -> list[str]:
    """The lines of the `nth` ```sh block under the README heading `title` (before the next heading)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(title)
    stop = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    begins = [i for i in range(start, stop) if lines[i].startswith("```sh")]
    begin = begins[nth]
    end = next(i for i in range(begin + 1, len(lines)) if lines[i].startswith("```"))
    return lines[begin + 1:end]


def test_ci_runs_the_readme_test_command_and_nothing_of_its_own():
    """.ci/run reads the command from the README; it installs no other way, and the only pytest it
    runs by itself is the README's second command (the e2e tests the first one leaves out)."""
    import subprocess

    (command,) = _readme_block("## Install and run the tests")
    assert "QT_QPA_PLATFORM=offscreen" in command and "-m pytest" in command
    (e2e,) = _readme_block("## Install and run the tests", nth=1)
    assert e2e.endswith("-m pytest -m e2e")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install" not in ci
    runs = [line.strip() for line in ci.splitlines()
            if "-m pytest" in line and not line.lstrip().startswith(("#", "echo"))]
    assert runs == [e2e]
    extract = ci[ci.index("test_command=$(awk"):ci.index("README.md)") + len("README.md)")]
    out = subprocess.run(["bash", "-c", f"{extract}; printf '%s' \"$test_command\""], capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert out.stdout == command



def test_ci_installs_the_packages_the_readme_lists():
    """.ci/run installs, for its real window, what the README tells Debian/Ubuntu users to install."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"Debian / Ubuntu: `sudo apt install ([^`]+)`", readme)[1].split()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    packages = re.search(r"window_packages=\(([^)]*)\)", ci)[1].split()
    assert packages == ["xvfb", "openbox", *listed]  # Xvfb and a window manager: the first-run check maximizes
