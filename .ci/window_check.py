"""A real window in CI: start Xvfb, launch ``tokviz`` on Qt's xcb platform with fresh settings, wait
for its window to be mapped, screenshot it, check that it is not blank and that tokviz wrote nothing
on stderr, close it; then launch it a few more times and report the median time to a visible window.

Run with the project's virtual environment: ``.venv/bin/python .ci/window_check.py [--runs N]``.
Talks to the X server through libX11 with ctypes (no extra packages): it waits for the MapNotify
of the tokviz window instead of polling, so measuring does not compete with the launch for CPU.
Exit status 0 when every check passes (the timing is reported, and only fails past --max-median).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TOKVIZ = ROOT / ".venv" / "bin" / "tokviz"
SUBSTRUCTURE_NOTIFY_MASK = 1 << 19
MAP_NOTIFY = 19
Z_PIXMAP = 2
ALL_PLANES = 0xFFFFFFFF
WELCOME_AFTER_S = 5.0
WINDOW_MANAGER = "openbox"


class XMapEvent(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("event", ctypes.c_ulong), ("window", ctypes.c_ulong),
                ("override_redirect", ctypes.c_int)]


class XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xmap", XMapEvent), ("pad", ctypes.c_long * 24)]


class XWindowAttributes(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int), ("height", ctypes.c_int),
                ("border_width", ctypes.c_int), ("depth", ctypes.c_int), ("visual", ctypes.c_void_p),
                ("root", ctypes.c_ulong), ("class_", ctypes.c_int), ("bit_gravity", ctypes.c_int),
                ("win_gravity", ctypes.c_int), ("backing_store", ctypes.c_int), ("backing_planes", ctypes.c_ulong),
                ("backing_pixel", ctypes.c_ulong), ("save_under", ctypes.c_int), ("colormap", ctypes.c_ulong),
                ("map_installed", ctypes.c_int), ("map_state", ctypes.c_int), ("all_event_masks", ctypes.c_long),
                ("your_event_mask", ctypes.c_long), ("do_not_propagate_mask", ctypes.c_long),
                ("override_redirect", ctypes.c_int), ("screen", ctypes.c_void_p)]


class XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.POINTER(ctypes.c_ubyte)), ("byte_order", ctypes.c_int),
                ("bitmap_unit", ctypes.c_int), ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int), ("bits_per_pixel", ctypes.c_int)]


X_ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


def _xlib():
    x = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XDefaultRootWindow.restype = ctypes.c_ulong
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XSelectInput.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_long]
    x.XConnectionNumber.argtypes = [ctypes.c_void_p]
    x.XPending.argtypes = [ctypes.c_void_p]
    x.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.POINTER(XEvent)]
    x.XInternAtom.restype = ctypes.c_ulong
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XGetWindowProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_long, ctypes.c_long,
                                     ctypes.c_int, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong),
                                     ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_ulong),
                                     ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.POINTER(ctypes.c_ubyte))]
    x.XGetWindowAttributes.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(XWindowAttributes)]
    x.XGetImage.restype = ctypes.POINTER(XImage)
    x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                            ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    x.XFree.argtypes = [ctypes.c_void_p]
    x.XSetErrorHandler.argtypes = [X_ERROR_HANDLER]
    x.XFlush.argtypes = [ctypes.c_void_p]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return x


class XServer:
    """Xvfb on a free display, with one connection that hears windows being mapped."""

    def __init__(self, size: str = "1600x1000x24") -> None:
        read, write = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp"],
                                     pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(write)
        number = b""
        deadline = time.monotonic() + 20
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([read], [], [], 1.0)
            if ready:
                chunk = os.read(read, 16)
                if not chunk:
                    break
                number += chunk
        os.close(read)
        if not number.strip():
            raise SystemExit(f"window check: Xvfb did not start: {self.proc.stderr.read().decode()[-500:]}")
        self.display = f":{number.decode().strip()}"
        self.x = _xlib()
        self.dpy = self.x.XOpenDisplay(self.display.encode())
        if not self.dpy:
            raise SystemExit(f"window check: cannot open display {self.display}")
        self._on_error = X_ERROR_HANDLER(lambda _dpy, _event: 0)  # a window gone meanwhile is no reason to exit
        self.x.XSetErrorHandler(self._on_error)
        self.root = self.x.XDefaultRootWindow(self.dpy)
        self.x.XSelectInput(self.dpy, self.root, SUBSTRUCTURE_NOTIFY_MASK)
        self.x.XFlush(self.dpy)

    def _name(self, window: int) -> str:
        """The window's title (_NET_WM_NAME, else WM_NAME: Qt writes both as UTF-8)."""
        for atom_name in (b"_NET_WM_NAME", b"WM_NAME"):
            atom = self.x.XInternAtom(self.dpy, atom_name, 0)
            kind, fmt = ctypes.c_ulong(), ctypes.c_int()
            n, after, data = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.POINTER(ctypes.c_ubyte)()
            ok = self.x.XGetWindowProperty(self.dpy, window, atom, 0, 4096, 0, 0, ctypes.byref(kind),
                                           ctypes.byref(fmt), ctypes.byref(n), ctypes.byref(after), ctypes.byref(data))
            if ok == 0 and data:
                text = ctypes.string_at(data, n.value).decode("utf-8", "replace") if fmt.value == 8 else ""
                self.x.XFree(data)
                if text:
                    return text
        return ""

    def wait_mapped(self, title_part: str, timeout: float) -> int | None:
        """The first top-level window mapped whose title holds `title_part`, or None."""
        fd = self.x.XConnectionNumber(self.dpy)
        event = XEvent()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while self.x.XPending(self.dpy):
                self.x.XNextEvent(self.dpy, ctypes.byref(event))
                if event.type == MAP_NOTIFY and not event.xmap.override_redirect:
                    if title_part in self._name(event.xmap.window):
                        return event.xmap.window
            select.select([fd], [], [], min(0.5, max(0.0, deadline - time.monotonic())))
        return None

    def screenshot(self, window: int) -> np.ndarray:
        """The window's pixels (height, width, 3), RGB."""
        attrs = XWindowAttributes()
        self.x.XGetWindowAttributes(self.dpy, window, ctypes.byref(attrs))
        self.x.XSync(self.dpy, 0)
        image = self.x.XGetImage(self.dpy, window, 0, 0, attrs.width, attrs.height, ALL_PLANES, Z_PIXMAP)
        if not image:
            raise SystemExit("window check: XGetImage failed")
        img = image.contents
        if img.bits_per_pixel != 32:
            raise SystemExit(f"window check: {img.bits_per_pixel} bits per pixel; run Xvfb at depth 24")
        h, w, bpl = img.height, img.width, img.bytes_per_line
        raw = np.ctypeslib.as_array(img.data, shape=(h * bpl,)).copy()
        self.x.XFree(img.data)
        self.x.XFree(image)
        bgrx = raw.reshape(h, bpl)[:, : w * 4].reshape(h, w, 4)
        return bgrx[:, :, 2::-1].copy()

    def close(self) -> None:
        self.x.XCloseDisplay(self.dpy)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def fresh_env(display: str, home: Path) -> dict[str, str]:
    """Environment of a first start: empty home, XDG folders and runtime dir, the xcb platform."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QT_", "XDG_", "WAYLAND", "TOKVIZ_", "DBUS_SESSION"))}
    runtime = home / "runtime"
    for sub in ("config", "data", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    runtime.mkdir(mode=0o700, exist_ok=True)
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"), XDG_RUNTIME_DIR=str(runtime))
    return env


def launch(server: XServer, home: Path, *, timeout: float = 60.0):
    """Start tokviz; (process, seconds until its window was on screen with something drawn in it,
    or None, window id)."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(TOKVIZ)], env=fresh_env(server.display, home), cwd=home,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    window = server.wait_mapped(" — tokviz", timeout)  # the main window ("NAME — tokviz"), not a helper
    if window is None:
        return proc, None, None
    deadline = time.perf_counter() + timeout
    while blank_reason(server.screenshot(window)) is not None:  # mapped: now wait for the first paint
        if time.perf_counter() > deadline or proc.poll() is not None:
            return proc, None, window
        time.sleep(0.01)
    return proc, time.perf_counter() - start, window


def close(proc: subprocess.Popen) -> tuple[int, str, str]:
    """Ctrl+C closes the window the way the user would; (exit status, stdout, stderr)."""
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def blank_reason(pixels: np.ndarray) -> str | None:
    """Why a screenshot looks blank (a few colours, or one colour nearly everywhere), or None.
    Looks at every 4th pixel of every 4th row: cheap enough to ask every few milliseconds."""
    sample = pixels[::4, ::4].reshape(-1, 3).astype(np.uint32)
    packed = (sample[:, 0] << 16) | (sample[:, 1] << 8) | sample[:, 2]
    _, counts = np.unique(packed, return_counts=True)
    share = counts.max() / len(packed)
    if len(counts) < 16:
        return f"only {len(counts)} colours"
    if share > 0.97:
        return f"{share:.1%} of the pixels are one colour"
    return None


def start_window_manager(display: str, home: Path) -> subprocess.Popen | None:
    """A window manager on `display` (it maximizes the first window as a desktop does), with `home`
    as its home (no configuration of the user's), or None when none is installed."""
    if shutil.which(WINDOW_MANAGER) is None:
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "DBUS_SESSION"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(DISPLAY=display, HOME=str(home))
    return subprocess.Popen([WINDOW_MANAGER, "--sm-disable"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def read_report(proc: subprocess.Popen, prefix: bytes, timeout: float) -> bytes | None:
    """The first line `proc` writes on stdout that starts with `prefix` (without it), or None."""
    fd = proc.stdout.fileno()
    buffer = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buffer += chunk
        for line in buffer.splitlines(keepends=True):
            if line.startswith(prefix) and line.endswith(b"\n"):
                return line[len(prefix):].strip()
    return None


def check_welcome(server: XServer, home: Path, shot: Path) -> tuple[list[str], str]:
    """Launch tokviz for the first time under a window manager; (failures, a line saying what was seen)."""
    import json

    from tokviz.core.io.gif import write_png

    failures: list[str] = []
    wm = start_window_manager(server.display, home.with_name(home.name + "-wm"))
    env = fresh_env(server.display, home)
    env["TOKVIZ_REPORT_WELCOME_AFTER"] = str(WELCOME_AFTER_S)
    try:
        proc = subprocess.Popen([str(TOKVIZ)], env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        report = read_report(proc, b"welcome ", WELCOME_AFTER_S + 90)
        shot.write_bytes(write_png(server.screenshot(server.root)))
        code, _, err = close(proc)
    finally:
        stop(wm)
    manager = WINDOW_MANAGER if wm is not None else "no window manager (not maximized)"
    if report is None:
        return [f"the welcome check got no report from tokviz (exit {code}): {err.strip()[-1000:]}"], ""
    state = json.loads(report)
    for key, what in (("showing", "visible"), ("on_top", "on top of the panels"),
                      ("paths_reachable", "reachable by a click on each path")):
        if not state.get(key):
            failures.append(f"{WELCOME_AFTER_S:g} s after a first start the welcome screen is not {what}: "
                            f"{state}; see {shot}")
    if err:
        failures.append(f"tokviz wrote on stderr (welcome check): {err.strip()[:2000]}")
    seen = (f"window check: welcome screen {WELCOME_AFTER_S:g} s after a first start ({manager}): showing "
            f"{state.get('showing')}, on top {state.get('on_top')}, paths reachable "
            f"{state.get('paths_reachable')}; screenshot {shot}")
    return failures, seen


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5, help="launches timed after the checked one")
    parser.add_argument("--max-median", type=float, default=None, help="fail when the median is over this (s)")
    parser.add_argument("--screenshot", type=Path, default=None, help="where to write the PNG (default: a temp dir)")
    args = parser.parse_args()
    for tool in ("Xvfb",):
        if shutil.which(tool) is None:
            print(f"window check: {tool} is not installed", file=sys.stderr)
            return 2
    server = XServer()
    failures: list[str] = []
    times: list[float] = []
    try:
        with tempfile.TemporaryDirectory(prefix="tokviz-window-") as tmp:
            home = Path(tmp) / "first"
            proc, seconds, window = launch(server, home)
            if window is None:
                code, _, err = close(proc)
                print(f"window check: no tokviz window appeared (exit {code}): {err.strip()[-2000:]}", file=sys.stderr)
                return 1
            time.sleep(1.0)  # let it paint everything, then look
            pixels = server.screenshot(window)
            from tokviz.core.io.gif import write_png

            shot = args.screenshot or Path(tmp).parent / "tokviz-window-check.png"
            shot.write_bytes(write_png(pixels))
            reason = blank_reason(pixels)
            if reason:
                failures.append(f"the window looks blank ({reason}); see {shot}")
            code, out, err = close(proc)
            if code != 0:
                failures.append(f"tokviz exited with status {code} after Ctrl+C")
            if err:
                failures.append(f"tokviz wrote on stderr: {err.strip()[:2000]}")
            when = f"{seconds:.2f} s" if seconds is not None else "never"
            print(f"window check: window {pixels.shape[1]}x{pixels.shape[0]} drawn after {when} (first start), "
                  f"screenshot {shot}")
            welcome_failures, seen = check_welcome(server, Path(tmp) / "welcome",
                                                   shot.with_name(shot.stem + "-welcome.png"))
            failures += welcome_failures
            if seen:
                print(seen)
            for i in range(args.runs):
                proc, seconds, window = launch(server, Path(tmp) / f"run{i}")
                code, _, err = close(proc)
                if seconds is None:
                    failures.append(f"launch {i + 2}: no window ({err.strip()[-500:]})")
                    continue
                times.append(seconds)
                if err:
                    failures.append(f"launch {i + 2}: tokviz wrote on stderr: {err.strip()[:500]}")
    finally:
        server.close()
    if times:
        median = statistics.median(times)
        print(f"window check: time to a visible window, {len(times)} launches: median {median:.3f} s "
              f"(min {min(times):.3f}, max {max(times):.3f}; {', '.join(f'{t:.2f}' for t in times)}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        if args.max_median is not None and median > args.max_median:
            failures.append(f"median time to a visible window {median:.3f} s is over {args.max_median} s")
    for f in failures:
        print(f"window check: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
