"""Animation export: the GIF plays (read back with Qt), PNG sequences, cancel, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage, QImageReader

from tokviz.app.classroom.animation import AnimationSpec
from tokviz.app.classroom.animation_dialog import AnimationDialog
from tokviz.app.classroom.frames import image_to_array
from tokviz.core import TrainSettings

TEXT = "low lower lowest newer newest wider widest " * 30


@pytest.fixture
def trained(window):
    window.script.set_corpus_text(TEXT, word_counts=False)
    assert window.script.start_training(TrainSettings(merges=12, split="gpt2"))
    assert window.script.wait_for_training(60_000) == "finished"
    return window


def _export(window, qtbot, spec: AnimationSpec) -> str:
    with qtbot.waitSignal(window.animation.finished, timeout=60_000) as blocker:
        assert window.script.export_animation(spec)
    return blocker.args[0]


def test_gif_plays(trained, qtbot, tmp_path):
    w = trained
    w.step_model.set_step(9)
    out = tmp_path / "replay.gif"
    spec = AnimationSpec(out, first=0, last=10, every=2, target="timeline", width=320, height=200,
                         ms_per_frame=150, format="gif", loop=True)
    assert spec.steps() == [0, 2, 4, 6, 8, 10]
    assert _export(w, qtbot, spec) == str(out)
    reader = QImageReader(str(out))
    assert reader.format() == b"gif" and reader.supportsAnimation()
    assert reader.imageCount() == 6 and reader.loopCount() == -1  # -1: loops forever
    frames = []
    for _ in range(6):
        img = reader.read()
        assert not img.isNull() and (img.width(), img.height()) == (320, 200)
        assert reader.nextImageDelay() == 150
        frames.append(image_to_array(img))
    assert not np.array_equal(frames[0], frames[-1])  # the replay moves
    assert w.step_model.step == 9  # the step shown before the export comes back
    assert not w.animation.is_running


def test_png_sequence_of_the_token_view(trained, qtbot, tmp_path):
    folder = tmp_path / "frames"
    spec = AnimationSpec(folder, first=0, last=7, every=3, target="token_view", width=200, height=120,
                         format="png")
    assert spec.steps() == [0, 3, 6, 7]  # always ends on the last step
    _export(trained, qtbot, spec)
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["frame_0001.png", "frame_0002.png", "frame_0003.png", "frame_0004.png"]
    images = [QImage(str(folder / n)) for n in names]
    assert all((i.width(), i.height()) == (200, 120) for i in images)
    assert not np.array_equal(image_to_array(images[0]), image_to_array(images[-1]))


def test_corpus_target_and_no_loop(trained, qtbot, tmp_path):
    out = tmp_path / "corpus.gif"
    _export(trained, qtbot, AnimationSpec(out, first=1, last=3, target="corpus", width=160, height=100,
                                          ms_per_frame=1000, loop=False))
    reader = QImageReader(str(out))
    assert reader.imageCount() == 3 and reader.loopCount() == 0 and reader.read().width() == 160
    assert reader.nextImageDelay() == 1000


def test_cancel_while_rendering(trained, qtbot, tmp_path):
    w = trained
    w.step_model.set_step(5)
    out = tmp_path / "never.gif"
    got = []
    w.animation.progress_changed.connect(lambda what, f: got.append(f))
    with qtbot.waitSignal(w.animation.cancelled, timeout=10_000):
        assert w.script.export_animation(AnimationSpec(out, first=0, last=12, target="timeline", width=120, height=80))
        qtbot.waitUntil(lambda: len(got) >= 2, timeout=10_000)
        assert w.animation.cancel()
    assert not out.exists() and not w.animation.is_running
    assert w.step_model.step == 5
    assert 0 < got[-1] < 1


@pytest.mark.parametrize("spec, message", [
    (AnimationSpec(Path("x.gif"), first=0, last=999), "outside 0..12"),
    (AnimationSpec(Path("x.gif"), width=5), "between 16 and 4096"),
    (AnimationSpec(Path("x.gif"), target="nope"), "unknown panel"),
])
def test_bad_specs_give_a_message(trained, dialogs, spec, message):
    assert not trained.script.export_animation(spec)
    assert dialogs.errors[-1][0] == "Cannot export the animation" and message in dialogs.errors[-1][1].lower()


def test_no_timeline_yet(window, dialogs, tmp_path):
    window.step_model.set_timeline(None)
    assert not window.script.export_animation(AnimationSpec(tmp_path / "x.gif"))
    assert "no timeline yet" in dialogs.errors[-1][1].lower()


def test_unwritable_output_fails_cleanly(trained, qtbot, tmp_path, dialogs):
    blocker_file = tmp_path / "file"
    blocker_file.write_text("x")
    with qtbot.waitSignal(trained.animation.failed, timeout=30_000):
        trained.script.export_animation(AnimationSpec(blocker_file / "sub" / "x.gif", first=0, last=1, width=40,
                                               height=30))
    assert "cannot write" in dialogs.errors[-1][1]


def test_dialog_builds_the_spec(qtbot, tmp_path):
    d = AnimationDialog(n_steps=40, step=30)
    qtbot.addWidget(d)
    d.fps.setValue(5)
    d.format.setCurrentIndex(1)
    d.loop.setChecked(False)
    spec = d.spec(tmp_path / "f")
    assert (spec.first, spec.last, spec.ms_per_frame, spec.format, spec.loop) == (0, 30, 200, "png", False)
    assert spec.width == 800 and spec.height == 500


def test_cli_animate(tmp_path):
    """``tokviz animate MODEL --text ... --from A --to B --out x.gif`` (offscreen, own process)."""
    import os
    import subprocess
    import sys

    from tokviz.core import save_timeline, train

    model = tmp_path / "m.json"
    save_timeline(train(TrainSettings(merges=6, split="gpt2"), texts=[TEXT]), model)
    out = tmp_path / "cli.gif"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TOKVIZ_SETTINGS_FILE=str(tmp_path / "s.ini"))
    cmd = [sys.executable, "-m", "tokviz", "animate", str(model), "--text", "lowest newest", "--from", "0",
           "--to", "6", "--every", "2", "--size", "160x90", "--fps", "5", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    reader = QImageReader(str(out))
    assert reader.imageCount() == 4 and reader.read().width() == 160 and reader.nextImageDelay() == 200
    bad = subprocess.run(cmd[:-6] + ["--size", "huge", "--out", str(out)], capture_output=True, text=True,
                         timeout=300, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "WIDTHxHEIGHT" in bad.stderr


def test_captions_fit_the_frame_and_small_panels_render_sharp(qtbot):
    """A long caption shrinks to the frame's width; a small widget is rendered at up to 4x (not
    grabbed and blown up), so a token strip fills a slide."""
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QLabel

    from tokviz.app.classroom.frames import MAX_RENDER_SCALE, caption_font, render_crisp

    short, long = "Step 3 of 9", "Step 30 of 144 · merge: “c” + “h” → “ch” (797×) " * 2
    assert caption_font(short, 800, 500).pixelSize() == 500 // 16
    font = caption_font(long, 800, 500)
    assert font.pixelSize() < 500 // 16
    assert QFontMetrics(font).horizontalAdvance(long) <= 800 - 16 or font.pixelSize() == 9
    label = QLabel("tokens")
    qtbot.addWidget(label)
    label.resize(100, 20)
    image = render_crisp(label, (100, 20), 800, 400)
    assert (image.width(), image.height()) == (100 * MAX_RENDER_SCALE, 20 * MAX_RENDER_SCALE)
    assert render_crisp(label, (100, 20), 150, 400).width() == 150  # fills the width, no more
