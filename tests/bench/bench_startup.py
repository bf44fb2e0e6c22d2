"""Start-up benchmark: ``tokviz --help``/``--version`` (and each command's ``--help``) against a bare
Python start, and a launch of the window to its first paint against a bare PySide6 window.

Run ``python tests/bench/bench_startup.py [--runs N] [--launch-runs N] [--platform offscreen|xcb|both]``.
Prints a table and writes ``tests/bench/results/startup.json``.

* Command line: whole processes, in rounds (each round runs every command once, so a change of load
  hits them all alike), after one untimed round; wall time and the process's CPU time (user +
  system, from ``wait4``), medians, ratios to ``python -c "import argparse"`` in the same run.
  Target: ``tokviz --help`` and ``--version`` within 5x.
* Window: a fresh process with fresh settings (a first start: the window maximized, the welcome
  screen on top) until the main window's first paint has finished, against a bare PySide6 window
  (a `QMainWindow` with a menu bar and a page of text, maximized) in the same rounds; wall time
  from the start of the process, and the CPU time the process has used by then (every thread).
  ``xcb`` runs on an Xvfb of its own (as ``.ci/window_check.py`` does); ``offscreen`` needs no
  display. Targets: at most 0.8 s on a quiet machine, at most 3x the bare window (wall and CPU).

The machine's load average is printed beside the figures: wall times on a loaded machine grow with
the load, CPU times much less.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = HERE / "results"
TOKVIZ = Path(sys.executable).parent / "tokviz"
CLI_TARGET = 5.0  # --help, --version: at most this many times a bare `import argparse`
LAUNCH_TARGET_S = 0.8  # on a quiet machine
LAUNCH_RATIO_TARGET = 3.0  # to a bare PySide6 window under the same load

# the child reports once its main window's first paint has finished: a zero timer posted from the
# window's paintEvent runs after that paint (and its flush to the screen), and before what the
# window itself defers to after its first paint. No event filter (the probe costs nothing per
# event), and nothing imported before the program's own imports (their order matters: see
# `tokviz.app.gui.run_gui`).
PAINT_PROBE = r"""
import os, resource, sys

def _report():
    use = resource.getrusage(resource.RUSAGE_SELF)
    sys.stdout.write(f"PAINTED {use.ru_utime + use.ru_stime:.4f}\n")
    sys.stdout.flush()
    os._exit(0)  # the figure is taken; no need to close the window

def _probe(window_class):
    from PySide6.QtCore import QTimer

    paint = window_class.paintEvent
    def paintEvent(self, event):
        if not getattr(_probe, "seen", False):  # posted first: before what the window defers itself
            _probe.seen = True
            QTimer.singleShot(0, _report)
        paint(self, event)
    window_class.paintEvent = paintEvent
"""

TOKVIZ_WINDOW = PAINT_PROBE + r"""
import tokviz.app.gui as gui  # no Qt yet: the window's modules are imported inside its functions

_create = gui.create_main_window
def _create_probed(*args, **kwargs):
    window = _create(*args, **kwargs)  # shown, not painted yet: that needs the event loop
    _probe(type(window))
    return window
gui.create_main_window = _create_probed
sys.argv = ["tokviz"]
from tokviz.app.cli.entry import run  # as the `tokviz` command starts
run()
"""

BARE_WINDOW = PAINT_PROBE + r"""
from PySide6.QtWidgets import QApplication, QMainWindow, QPlainTextEdit

class Window(QMainWindow):
    pass

_probe(Window)
app = QApplication(sys.argv[:1])
window = Window()
window.setWindowTitle("bare — tokviz")
window.menuBar().addMenu("&File")
window.menuBar().addMenu("&Help")
window.setCentralWidget(QPlainTextEdit("\n".join(f"line {i}: the quick brown fox jumps over the lazy dog"
                                                 for i in range(60))))
window.statusBar().showMessage("Ready")
window.showMaximized()
app.exec()
"""


# -- command line -----------------------------------------------------------------------------


def cli_commands() -> dict[str, list[str]]:
    """Name -> argv of every command-line row, the references first."""
    from tokviz.app.cli.parser import COMMANDS

    py = sys.executable
    rows = {"python -c pass": [py, "-c", "pass"], "python -c 'import argparse'": [py, "-c", "import argparse"],
            "tokviz --version": [str(TOKVIZ), "--version"], "tokviz --help": [str(TOKVIZ), "--help"]}
    rows.update({f"tokviz {name} --help": [str(TOKVIZ), name, "--help"] for name in COMMANDS})
    return rows


def run_timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of one whole process; its output is discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with status {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def bench_cli(runs: int) -> dict:
    rows = cli_commands()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for i in range(runs + 1):
        for name, argv in rows.items():
            measured = run_timed(argv)
            if i:  # round 0 warms the bytecode and the page cache
                times[name].append(measured)
    ref = "python -c 'import argparse'"
    ref_wall = statistics.median(w for w, _ in times[ref])
    ref_cpu = statistics.median(c for _, c in times[ref])
    out = {}
    for name, pairs in times.items():
        wall, cpu = statistics.median(w for w, _ in pairs), statistics.median(c for _, c in pairs)
        out[name] = {"wall_ms": round(wall * 1000, 1), "cpu_ms": round(cpu * 1000, 1),
                     "wall_ratio": round(wall / ref_wall, 2), "cpu_ratio": round(cpu / ref_cpu, 2)}
    return out


# -- window -----------------------------------------------------------------------------------


def fresh_env(home: Path, platform_name: str, display: str | None) -> dict[str, str]:
    """A first start: empty home, XDG folders and settings file."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QT_", "XDG_", "WAYLAND", "TOKVIZ_", "DBUS_SESSION"))}
    runtime = home / "runtime"
    for sub in ("config", "data", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    runtime.mkdir(mode=0o700, exist_ok=True)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on every start after the first
    env.update(QT_QPA_PLATFORM=platform_name, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"), XDG_RUNTIME_DIR=str(runtime),
               TOKVIZ_SETTINGS_FILE=str(home / "settings.ini"))
    if display is not None:
        env["DISPLAY"] = display
    return env


def launch(snippet: str, env: dict[str, str], timeout: float = 120.0) -> tuple[float, float]:
    """(wall s, CPU s) from starting a Python process on `snippet` to its report of a painted window."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", snippet], env=env, cwd=env["HOME"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    line = b""
    deadline = start + timeout
    while not line.endswith(b"\n") and time.perf_counter() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
    wall = time.perf_counter() - start
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    report = next((ln for ln in line.decode().splitlines() if ln.startswith("PAINTED ")), None)
    if report is None:
        raise RuntimeError(f"no painted window (exit {proc.returncode}): {err.decode(errors='replace')[-2000:]}")
    return wall, float(report.split()[1])


def start_xvfb():
    """`.ci/window_check.py`'s Xvfb, or None when Xvfb is not installed."""
    if shutil.which("Xvfb") is None:
        return None
    spec = importlib.util.spec_from_file_location("window_check", ROOT / ".ci" / "window_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.XServer()


def bench_window(runs: int, platform_name: str) -> dict | None:
    server = start_xvfb() if platform_name == "xcb" else None
    if platform_name == "xcb" and server is None:
        return None
    display = server.display if server is not None else None
    times: dict[str, list[tuple[float, float]]] = {"bare": [], "tokviz": []}
    try:
        with tempfile.TemporaryDirectory(prefix="tokviz-startup-") as tmp:
            for i in range(runs + 1):
                for name, snippet in (("bare", BARE_WINDOW), ("tokviz", TOKVIZ_WINDOW)):
                    measured = launch(snippet, fresh_env(Path(tmp) / f"{name}{i}", platform_name, display))
                    if i:  # round 0 warms the bytecode and font caches
                        times[name].append(measured)
    finally:
        if server is not None:
            server.close()
    out: dict = {}
    for name, pairs in times.items():
        out[name] = {"wall_s": round(statistics.median(w for w, _ in pairs), 3),
                     "cpu_s": round(statistics.median(c for _, c in pairs), 3),
                     "walls": [round(w, 3) for w, _ in pairs]}
    out["wall_ratio"] = round(out["tokviz"]["wall_s"] / out["bare"]["wall_s"], 2)
    out["cpu_ratio"] = round(out["tokviz"]["cpu_s"] / out["bare"]["cpu_s"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="rounds of the command-line rows")
    ap.add_argument("--launch-runs", type=int, default=5, help="rounds of the window launches")
    ap.add_argument("--platform", choices=("offscreen", "xcb", "both"), default="both",
                    help="Qt platform of the window launches (xcb: on an Xvfb of its own; default both)")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "startup.json")
    args = ap.parse_args(argv)

    load_before = os.getloadavg()
    result: dict = {"benchmark": "startup", "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                    "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    if not args.skip_cli:
        result["cli"] = bench_cli(args.runs)
    platforms = ("offscreen", "xcb") if args.platform == "both" else (args.platform,)
    result["window"] = {p: bench_window(args.launch_runs, p) for p in platforms}
    result["loadavg"] = {"before": [round(x, 2) for x in load_before],
                         "after": [round(x, 2) for x in os.getloadavg()]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    ok = True
    if "cli" in result:
        width = max(map(len, result["cli"]))
        print(f"{'command (median of ' + str(args.runs) + ')':<{width}}  {'wall':>9}  {'CPU':>9}  "
              f"{'wall x':>6}  {'CPU x':>6}  target")
        for name, row in result["cli"].items():
            target = f"<= {CLI_TARGET:g}x" if name in ("tokviz --help", "tokviz --version") else ""
            if target:
                ok &= row["wall_ratio"] <= CLI_TARGET and row["cpu_ratio"] <= CLI_TARGET
            print(f"{name:<{width}}  {row['wall_ms']:>6.1f} ms  {row['cpu_ms']:>6.1f} ms  "
                  f"{row['wall_ratio']:>5.2f}x  {row['cpu_ratio']:>5.2f}x  {target}")
        print("(ratios to python -c 'import argparse', same run)")
    for name, row in result["window"].items():
        if row is None:
            print(f"window ({name}): Xvfb is not installed; skipped")
            continue
        ok &= row["wall_ratio"] <= LAUNCH_RATIO_TARGET and row["cpu_ratio"] <= LAUNCH_RATIO_TARGET
        print(f"launch to a painted window ({name}, median of {args.launch_runs}): "
              f"bare PySide6 {row['bare']['wall_s']:.3f} s wall, {row['bare']['cpu_s']:.3f} s CPU; "
              f"tokviz {row['tokviz']['wall_s']:.3f} s wall, {row['tokviz']['cpu_s']:.3f} s CPU; "
              f"ratio {row['wall_ratio']:.2f}x wall, {row['cpu_ratio']:.2f}x CPU "
              f"(target <= {LAUNCH_RATIO_TARGET:g}x; <= {LAUNCH_TARGET_S} s quiet)")
    before, after = result["loadavg"]["before"], result["loadavg"]["after"]
    print(f"load average {before[0]:.2f} before, {after[0]:.2f} after, on {os.cpu_count()} CPUs")
    print(f"{'PASS' if ok else 'FAIL'}  (written to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
