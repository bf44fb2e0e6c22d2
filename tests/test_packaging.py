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
