"""Settings of the workspaces and the first-run screen: each workspace's dock state per layout
version, forgetting one, the workspace on screen, the first-run flag; odd values give defaults."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

from tokviz.engine import settings as settings_mod
from tokviz.engine.settings import AppSettings


def test_workspace_states_round_trip_and_are_forgotten(tmp_path):
    s = AppSettings.in_folder(tmp_path)
    assert s.workspace("learn") == "learn" and s.workspace_state("inspect") is None
    s.set_workspace("inspect")
    s.save_workspace_state("inspect", QByteArray(b"inspect-state"))
    s.save_workspace_state("learn", QByteArray(b"learn-state"))
    s.sync()
    again = AppSettings.in_folder(tmp_path)
    assert again.workspace("learn") == "inspect"
    assert again.workspace_state("inspect") == QByteArray(b"inspect-state")
    assert again.workspace_state("learn") == QByteArray(b"learn-state")
    again.save_workspace_state("inspect", None)  # Reset Workspace Layout
    assert again.workspace_state("inspect") is None and again.workspace_state("learn") is not None


def test_a_state_of_another_layout_version_is_ignored(tmp_path):
    path = tmp_path / "s.ini"
    q = QSettings(str(path), QSettings.Format.IniFormat)
    q.setValue(settings_mod.KEY_WORKSPACE_STATE.format("learn"), QByteArray(b"old"))
    q.setValue(settings_mod.KEY_WORKSPACE_VERSION.format("learn"), str(settings_mod.LAYOUT_VERSION - 1))
    q.setValue(settings_mod.KEY_WELCOME_DONE, "maybe")
    q.sync()
    s = AppSettings.open(path)
    assert s.workspace_state("learn") is None
    assert s.welcome_done() is False


def test_the_first_run_flag(tmp_path):
    s = AppSettings.in_folder(tmp_path)
    assert not s.welcome_done()
    s.set_welcome_done()
    s.sync()
    assert AppSettings.in_folder(tmp_path).welcome_done()
    s.set_welcome_done(False)
    assert not s.welcome_done()
