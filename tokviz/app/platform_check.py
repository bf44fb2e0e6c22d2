"""Before the window opens: can Qt's platform plugin load here? One line saying what to install.

On Linux, Qt draws through the ``xcb`` plugin (X11, and XWayland), which needs a dozen small X
libraries a fresh system may lack (``libxcb-cursor0``, ``libxcb-icccm4``, ``libxcb-keysyms1``,
...). Without them Qt prints several lines that name the wrong package and aborts the process.
`launch_problem` finds out first, without importing Qt: it loads the plugin file itself
(``dlopen``, which Qt would do next anyway) and, if that fails, lists every library the plugin
cannot find (``ldd``, else the loader's message), with the command that installs them on
Debian/Ubuntu (apt) or Fedora (dnf). It also catches the missing X display. Other platforms
(Wayland, offscreen, macOS, Windows) are Qt's to report.

What this leaves out: creating the application (`tokviz.app.gui`).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# library file -> (Debian/Ubuntu package, Fedora package); other names follow `_debian_name`
PACKAGES = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
}
NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
DLOPEN_ERROR = re.compile(r"(\S+\.so[.\d]*): cannot open shared object file")


def _debian_name(library: str) -> str:
    """libxcb-shape.so.0 -> libxcb-shape0, libxcb-xkb.so.1 -> libxcb-xkb1 (Debian's rule)."""
    stem, _, version = library.partition(".so.")
    stem = stem.lower()
    return f"{stem}{'-' if stem[-1:].isdigit() else ''}{version}"


def packages(libraries: list[str]) -> tuple[list[str], list[str]]:
    """(Debian/Ubuntu packages, Fedora packages) that provide `libraries`, in order, once each.

    >>> packages(["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-shape.so.0"])
    (['libxcb-icccm4', 'libxcb-keysyms1', 'libxcb-shape0'], ['xcb-util-wm', 'xcb-util-keysyms', 'libxcb'])
    """
    deb, rpm = [], []
    for lib in libraries:
        d, r = PACKAGES.get(lib, (_debian_name(lib), "libxcb" if lib.startswith("libxcb") else lib.split(".so")[0]))
        deb += [d] if d not in deb else []
        rpm += [r] if r not in rpm else []
    return deb, rpm


def _os_family(os_release: str | None = None) -> str:
    """"debian", "fedora" or "" (from /etc/os-release's ID and ID_LIKE)."""
    if os_release is None:
        try:
            os_release = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
        except OSError:
            os_release = ""
    ids = " ".join(m.strip('"\'') for m in re.findall(r"^ID(?:_LIKE)?=(.*)$", os_release, re.MULTILINE)).split()
    if any(i in ("debian", "ubuntu") for i in ids):
        return "debian"
    if any(i in ("fedora", "rhel", "centos") for i in ids):
        return "fedora"
    return ""


def install_command(libraries: list[str], os_release: str | None = None) -> str:
    """The command that installs `libraries` here (both when the system is neither family)."""
    deb, rpm = packages(libraries)
    apt, dnf = f"sudo apt install {' '.join(deb)}", f"sudo dnf install {' '.join(rpm)}"
    family = _os_family(os_release)
    return apt if family == "debian" else dnf if family == "fedora" else f"{apt} (Debian/Ubuntu) or {dnf} (Fedora)"


def qt_platform(env: Mapping[str, str]) -> str:
    """The platform plugin Qt will try first: QT_QPA_PLATFORM, else wayland in a Wayland
    session, else xcb (Linux)."""
    asked = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if asked:
        return asked
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb"


def xcb_plugin(env: Mapping[str, str]) -> Path | None:
    """The xcb plugin file Qt would load (PySide6's own, or QT_QPA_PLATFORM_PLUGIN_PATH's)."""
    folder = env.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    if not folder:
        spec = importlib.util.find_spec("PySide6")  # finds the package without importing Qt
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = str(Path(list(spec.submodule_search_locations)[0]) / "Qt" / "plugins" / "platforms")
    plugin = Path(folder) / "libqxcb.so"
    return plugin if plugin.is_file() else None


def missing_libraries(plugin: Path) -> list[str]:
    """The shared libraries `plugin` needs and cannot find; [] when it loads."""
    try:
        ctypes.CDLL(str(plugin), mode=getattr(os, "RTLD_LAZY", 1))  # what Qt does next: no cost when it works
        return []
    except OSError as exc:
        error = str(exc)
    try:
        out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=20).stdout
        found = list(dict.fromkeys(NOT_FOUND.findall(out)))
    except (OSError, subprocess.SubprocessError):
        found = []
    if not found:  # no ldd: the loader names the first one
        m = DLOPEN_ERROR.search(error)
        found = [m[1]] if m else [error.strip() or "a library"]
    return found


def launch_problem(env: Mapping[str, str] | None = None, os_release: str | None = None) -> str | None:
    """Why the window cannot open here (one line, what to do), or None when nothing is known wrong."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux") or qt_platform(env) != "xcb":
        return None
    plugin = xcb_plugin(env)
    if plugin is not None:
        missing = missing_libraries(plugin)
        if missing:
            return (f"tokviz: cannot open a window: Qt's xcb platform plugin needs {', '.join(missing)}, "
                    f"missing here; install with: {install_command(missing, os_release)}")
    if not env.get("DISPLAY"):
        return ("tokviz: cannot open a window: no X display (DISPLAY is not set); start tokviz in a desktop "
                "session, or set QT_QPA_PLATFORM=offscreen to run without a screen")
    return None
