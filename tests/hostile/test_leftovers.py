"""Interrupted writes leave nothing behind: the temporary file of an atomic write is removed
whatever stops it, stale ones from a killed process are cleaned at start-up, and exports go
through the same atomic write (a failed export leaves the old file intact)."""

from __future__ import annotations

import os
import time

import pytest

from tokviz.core import TokvizError, TrainSettings
from tokviz.core.io import safe_files
from tokviz.core.io.safe_files import remove_stale_temp_files, write_atomic


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_ctrl_c_during_a_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "model.json"
    target.write_bytes(b"old")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(safe_files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new" * 1000)
    assert _leftovers(tmp_path) == [] and target.read_bytes() == b"old"


def test_a_full_disk_is_one_clear_error_and_no_leftover(tmp_path, monkeypatch):
    target = tmp_path / "model.json"

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safe_files.os, "fsync", full)
    with pytest.raises(TokvizError, match="No space left"):
        write_atomic(target, b"x")
    assert _leftovers(tmp_path) == [] and not target.exists()


def test_stale_temporary_files_are_removed_and_nothing_else(tmp_path):
    stale, fresh = tmp_path / ".autosave.tokviz.abcd1234.tmp", tmp_path / ".m.json.wxyz5678.tmp"
    mine = tmp_path / "notes.tmp"
    for p in (stale, fresh, mine):
        p.write_text("x")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    os.utime(mine, (old, old))
    assert remove_stale_temp_files(tmp_path) == [stale]
    assert fresh.exists() and mine.exists()


def test_the_window_cleans_its_data_folder_at_start(make_window, settings_store):
    folder = settings_store.data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stale = folder / ".autosave.tokviz.k9k9k9k9.tmp"
    stale.write_text("half a session")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    make_window(load_default_sample=False)
    assert not stale.exists()


def test_failed_exports_leave_the_previous_file(window, tmp_path, qtbot, monkeypatch):
    window.script.set_corpus_text("low lower lowest newer newest " * 20)
    assert window.script.start_training(TrainSettings(merges=5, split="whitespace"))
    assert window.script.wait_for_training() == "finished"
    with pytest.raises(TokvizError, match="cannot write"):
        window.timeline_panel.export_csv(tmp_path / "no such folder" / "merges.csv")
    csv, png = tmp_path / "merges.csv", tmp_path / "chart.png"
    csv.write_text("previous")
    png.write_bytes(b"previous")

    def disk_full(src, dst):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(safe_files.os, "replace", disk_full)
        with pytest.raises(TokvizError, match="No space left"):
            window.timeline_panel.export_csv(csv)
        assert not window.timeline_panel.export_chart_png(png)
    assert csv.read_text() == "previous" and png.read_bytes() == b"previous" and _leftovers(tmp_path) == []
    assert window.timeline_panel.export_csv(csv) == 5 and csv.read_text().startswith("rank,")
    assert window.timeline_panel.export_chart_png(png) and png.read_bytes().startswith(b"\x89PNG")
