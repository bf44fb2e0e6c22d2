"""Test set-up shared by every test: offscreen Qt, isolated settings, paths to ../shared data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any Qt import

pytest_plugins = ["tests.qt_fixtures"]


SCRATCH_KEY = pytest.StashKey[Path]()
BUILDS_KEY = pytest.StashKey[bool]()
BUILDS_ENV = "TOKVIZ_TEST_BUILDS"  # files built at test time, once for a whole run (`shared_build`)
CACHE_ENV_KEY = pytest.StashKey["str | None"]()


def pytest_configure(config):
    """Files the libraries keep between runs go to a folder of this run, removed at its end:
    Hypothesis's home (its plugin writes ./.hypothesis while collecting, before any fixture runs;
    no example database: a shared one is written by every checkout on the machine) and tiktoken's
    download cache (tiktoken copies every file it reads into it: 42 MB after a few runs)."""
    scratch = Path(tempfile.mkdtemp(prefix="tokviz-tests-"))
    config.stash[SCRATCH_KEY] = scratch
    if not os.environ.get(BUILDS_ENV):  # the run's first process: its workers inherit the folder
        (scratch / "builds").mkdir()
        os.environ[BUILDS_ENV] = str(scratch / "builds")
        config.stash[BUILDS_KEY] = True
    config.stash[CACHE_ENV_KEY] = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(scratch / "tiktoken-cache")  # subprocesses inherit it
    try:  # tqdm's monitor thread (the reference libraries' progress bars) outlives its test: no fork after it
        import tqdm

        tqdm.tqdm.monitor_interval = 0
    except ImportError:
        pass
    try:
        from hypothesis import settings
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # hypothesis is not installed: nothing to move
        return
    set_hypothesis_home_dir(scratch / "hypothesis")
    settings.register_profile("tokviz-tests", database=None)
    settings.load_profile("tokviz-tests")  # --hypothesis-profile still wins (loaded after this)


def pytest_sessionstart(session):
    """`.ci/run` starts its e2e run beside the suite once the suite has started (the README command's
    install is then done): this file, named by TOKVIZ_SUITE_STARTED, says so."""
    marker = os.environ.get("TOKVIZ_SUITE_STARTED")
    if marker:
        Path(marker).touch()


def pytest_unconfigure(config):
    scratch = config.stash.get(SCRATCH_KEY, None)
    if config.stash.get(BUILDS_KEY, False):
        os.environ.pop(BUILDS_ENV, None)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
        previous = config.stash.get(CACHE_ENV_KEY, None)
        if previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"
VOCAB = SHARED / "vocab"


FONTS = ROOT / "resources" / "fonts"
FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>{fonts}</dir>
  <cachedir>{cache}</cachedir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>Sans Serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
</fontconfig>
"""


@pytest.fixture(scope="session", autouse=True)
def machine_independent_fonts(tmp_path_factory):
    """Qt (through fontconfig) sees the bundled fonts and no others, in this process and in the
    processes tests start: no test passes or fails because of the machine's fonts, and
    fontconfig's cache stays in the session's temporary folder."""
    folder = tmp_path_factory.mktemp("fontconfig")
    config = folder / "fonts.conf"
    config.write_text(FONTCONFIG.format(fonts=FONTS, cache=folder / "cache"), encoding="utf-8")
    previous = os.environ.get("FONTCONFIG_FILE")
    os.environ["FONTCONFIG_FILE"] = str(config)
    yield config
    if previous is None:
        os.environ.pop("FONTCONFIG_FILE", None)
    else:
        os.environ["FONTCONFIG_FILE"] = previous


@pytest.fixture(autouse=True)
def no_background_warm_up(monkeypatch):
    """Windows in tests warm no algorithm up on a thread of their own (`tokviz.engine.training.warm_up`):
    a thread still loading numba would decide, by timing, whether another test may fork. The tests of
    the warm-up itself switch it back on with `warm_ups_on`."""
    from tokviz.core.registry import SPECS
    from tokviz.engine.training import warm_up

    monkeypatch.setattr(warm_up, "_started", set(SPECS))


@pytest.fixture
def warm_ups_on(monkeypatch):
    """Every algorithm can be warmed up again (once each) in this test."""
    from tokviz.engine.training import warm_up

    monkeypatch.setattr(warm_up, "_started", set())


QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6")


def qt_modules_loaded(*modules: str, cwd: Path) -> list[str]:
    """The Qt modules a fresh interpreter has loaded after importing `modules` (run in `cwd`)."""
    probe = (f"import json, sys; import {', '.join(modules)}; "
             f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def shared_file(*parts: str) -> Path:
    """Path to a file in ../shared, or skip the test (with the reason) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs ../shared/{'/'.join(parts)} (not present in this checkout)")
    return path


def shared_build(name: str, build, elsewhere: Path | None = None) -> Path:
    """The file `name` built at test time once for the whole run, every xdist worker included
    (training a reference model takes seconds): ``build(folder)`` writes it in an empty folder
    of its own and returns its path; the first to finish puts it in place, never replaced (a
    worker may be reading it). Outside a test run (a benchmark) it is built in `elsewhere`."""
    folder = Path(os.environ.get(BUILDS_ENV) or elsewhere or tempfile.mkdtemp(prefix="tokviz-build-"))
    final = folder / name
    if not final.exists():
        own = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder))
        try:
            os.link(build(own), final)
        except FileExistsError:
            pass
    return final


@pytest.fixture
def cli(capsys, tmp_path, monkeypatch):
    """Run ``tokviz ARGS`` in-process from inside tmp_path; return (exit code, stdout, stderr)."""
    from tokviz.app.cli.main import main

    monkeypatch.chdir(tmp_path)

    def run(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def corpus_text():
    """Read the first `n` characters of a shared corpus: ``corpus_text("tinyshakespeare.txt", n)``."""

    def read(name: str, n: int | None = None) -> str:
        with shared_file("corpora", name).open(encoding="utf-8") as f:
            return f.read(-1 if n is None else n)

    return read


def skip_unless_fork() -> None:
    """Skip where forking is unsafe (not Linux, or another thread runs). The background warm-ups
    the window starts (numba compiling kernels: many seconds on a fresh machine) are waited for
    first, so whether a fork test runs does not depend on the tests before it."""
    import threading

    from tokviz.core.processes.fork import can_fork

    for thread in threading.enumerate():
        if thread.name.startswith(("tokviz-warm-up-", "tokviz-load-kernels")):
            thread.join(timeout=600)
    if not can_fork():
        others = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
        pytest.skip(f"forking is not available here (not Linux, or another thread runs: {others})")


@pytest.fixture
def forks(monkeypatch) -> list:
    """The children `tokviz.core.processes.fork.fork_call` starts from now on (one entry each);
    skips where forking is unsafe."""
    from tokviz.core.processes import fork

    skip_unless_fork()
    seen: list = []
    real = fork.fork_call
    monkeypatch.setattr(fork, "fork_call", lambda fn: seen.append(1) or real(fn))
    return seen
