"""Launching on any desktop: a platform plugin that cannot load is one line naming the missing
libraries and the command that installs them (exit 2, before Qt aborts); the desktop entry and its
icon go into $XDG_DATA_HOME and come out again."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tokviz.app import platform_check
from tokviz.app.desktop_entry import desktop_entry, entry_paths
from tokviz.app.platform_check import install_command, launch_problem, packages, qt_platform

DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'
UBUNTU = "ID=ubuntu\nID_LIKE=debian\n"
FEDORA = 'ID=fedora\nVERSION_ID=40\n'


def _xcb_plugin() -> Path:
    import PySide6

    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    if not sys.platform.startswith("linux") or not plugin.is_file():
        pytest.skip("Qt's xcb plugin is a Linux file")
    return plugin


def test_a_plugin_that_cannot_load_is_one_line_and_exit_2(tmp_path):
    """A copy of Qt's xcb plugin that needs a library no system has (one name changed in its
    dynamic section, same length) fails the way a fresh machine does, in a real `tokviz` process."""
    real = _xcb_plugin()
    platforms = tmp_path / "plugins" / "platforms"
    platforms.mkdir(parents=True)
    (tmp_path / "lib").symlink_to(real.parents[2] / "lib")  # the plugin finds Qt at $ORIGIN/../../lib
    data = real.read_bytes()
    assert b"libxcb-keysyms.so.1\0" in data
    (platforms / "libqxcb.so").write_bytes(data.replace(b"libxcb-keysyms.so.1\0", b"libxcb-keysymX.so.1\0"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "WAYLAND", "XDG_SESSION"))}
    env.update(QT_QPA_PLATFORM_PLUGIN_PATH=str(platforms), DISPLAY=":0", HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "tokviz"], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("tokviz: cannot open a window: Qt's xcb platform plugin needs ")
    assert "libxcb-keysymX.so.1" in out.stderr and "install with: " in out.stderr


def test_missing_libraries_are_named_with_their_packages(monkeypatch):
    monkeypatch.setattr(platform_check, "xcb_plugin", lambda env: Path("/qt/libqxcb.so"))
    monkeypatch.setattr(platform_check, "missing_libraries",
                        lambda plugin: ["libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"])
    env = {"DISPLAY": ":0"}
    assert launch_problem(env, DEBIAN) == (
        "tokviz: cannot open a window: Qt's xcb platform plugin needs libxcb-cursor.so.0, libxcb-icccm.so.4, "
        "libxcb-keysyms.so.1, missing here; install with: "
        "sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1")
    assert launch_problem(env, FEDORA).endswith(
        "install with: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms")
    assert launch_problem(env, "ID=arch\n").endswith(
        "(Debian/Ubuntu) or sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms (Fedora)")
    assert launch_problem({**env, "QT_QPA_PLATFORM": "offscreen"}, DEBIAN) is None  # not xcb: nothing to check
    assert launch_problem({**env, "QT_QPA_PLATFORM": "wayland;xcb"}, DEBIAN) is None


def test_no_display_is_one_line_too(monkeypatch):
    monkeypatch.setattr(platform_check, "xcb_plugin", lambda env: Path("/qt/libqxcb.so"))
    monkeypatch.setattr(platform_check, "missing_libraries", lambda plugin: [])
    assert launch_problem({}, DEBIAN) == (
        "tokviz: cannot open a window: no X display (DISPLAY is not set); start tokviz in a desktop session, "
        "or set QT_QPA_PLATFORM=offscreen to run without a screen")
    assert launch_problem({"DISPLAY": ":1"}, DEBIAN) is None


def test_the_real_plugin_here_is_judged_by_loading_it():
    """On this machine: `missing_libraries` agrees with the dynamic loader itself."""
    import ctypes

    plugin = _xcb_plugin()
    try:
        ctypes.CDLL(str(plugin))
        loads = True
    except OSError:
        loads = False
    missing = platform_check.missing_libraries(plugin)
    assert (missing == []) == loads
    assert all(name.endswith(tuple(f".so.{n}" for n in range(10))) for name in missing)


def test_package_names_and_platforms():
    assert packages(["libxkbcommon-x11.so.0", "libX11-xcb.so.1", "libxcb-xinerama.so.0"]) == (
        ["libxkbcommon-x11-0", "libx11-xcb1", "libxcb-xinerama0"], ["libxkbcommon-x11", "libX11-xcb", "libxcb"])
    assert install_command(["libxcb-icccm.so.4"], UBUNTU) == "sudo apt install libxcb-icccm4"
    assert qt_platform({}) == "xcb" and qt_platform({"QT_QPA_PLATFORM": "xcb:display=:1"}) == "xcb"
    assert qt_platform({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}) == "wayland"


def test_desktop_entry_install_and_uninstall(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    run = [sys.executable, "-m", "tokviz"]
    out = subprocess.run([*run, "--install-desktop-entry"], capture_output=True, text=True, env=env, timeout=120)
    desktop, icon = entry_paths(env)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == f"wrote {desktop}\nwrote {icon}\n"
    assert desktop == tmp_path / "data" / "applications" / "tokviz.desktop"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(desktop, encoding="utf-8")
    e = entry["Desktop Entry"]
    assert (e["Type"], e["Name"], e["Icon"], e["Terminal"]) == ("Application", "tokviz", icon.stem, "false")
    program, field = e["Exec"].rsplit(" ", 1)
    assert field == "%f" and os.access(program.strip('"'), os.X_OK)
    assert ET.parse(icon).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == [
        Path("data/applications/tokviz.desktop"), Path("data/icons/hicolor/scalable/apps/tokviz.svg")]

    out = subprocess.run([*run, "--uninstall-desktop-entry"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout == f"removed {desktop}\nremoved {icon}\n"
    assert not desktop.exists() and not icon.exists()


def test_exec_line_quotes_what_the_spec_reserves():
    text = desktop_entry(["/opt/my apps/python3", "-m", "tokviz"])
    assert 'Exec="/opt/my apps/python3" -m tokviz %f\n' in text
