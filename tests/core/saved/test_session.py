"""Session files: round trips, corpus by path + hash, clear errors, atomic writes."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tokviz.core import TrainSettings, train
from tokviz.core.errors import TokvizError
from tokviz.core.io.gif import changed_box, lzw_encode, write_gif, write_png
from tokviz.core.model_files import model_to_json
from tokviz.core.saved.session import (
    CorpusChangedError,
    CorpusRef,
    Session,
    SessionFormatError,
    check_corpus_file,
    corpus_by_path,
    load_session,
    save_session,
)
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.wordpiece.timeline import WordPieceSettings

TEXT = "low lower lowest newer newest " * 20


def _session(**kw) -> Session:
    tl = train(TrainSettings(merges=8, split="gpt2"), texts=[TEXT])
    base = dict(corpus=CorpusRef("Sample", False, text=TEXT), train_settings=tl.settings, timeline=tl,
                model_source="training", compare_tokenizers=["/x/gpt2.tiktoken"], step=5,
                view={"theme": "dark", "panels": {"token_view": {"text": "hi"}}})
    base.update(kw)
    return Session(**base)


def test_round_trip_keeps_everything(tmp_path):
    s = _session()
    path = tmp_path / "a.tokviz"
    save_session(s, path)
    d = json.loads(path.read_text(encoding="utf-8"))
    assert d["format"] == "tokviz-session" and d["version"] == 1
    back = load_session(path)
    assert back.to_json() == s.to_json()
    assert back.timeline.n_steps == 8 and back.step == 5 and back.corpus.text == TEXT
    assert back.train_settings == s.train_settings


@pytest.mark.parametrize("settings", [WordPieceSettings(merges=6), UnigramSettings(vocab_size=40)])
def test_other_algorithms_round_trip(tmp_path, settings):
    from tokviz.core.registry import make_training
    tl = make_training(settings, texts=[TEXT]).run()
    s = _session(train_settings=settings, timeline=tl)
    save_session(s, tmp_path / "b.tokviz")
    back = load_session(tmp_path / "b.tokviz")
    assert back.timeline.algorithm == tl.algorithm and back.timeline.n_steps == tl.n_steps
    assert model_to_json(back.timeline) == model_to_json(tl)
    assert type(back.train_settings) is type(settings)


def test_big_corpus_by_path_and_hash(tmp_path):
    f = tmp_path / "big.txt"
    f.write_text("hello world\n" * 100, encoding="utf-8")
    ref = corpus_by_path(f, title="big.txt")
    assert ref.text is None and ref.size == 1200 and len(ref.sha256) == 64
    s = _session(corpus=ref)
    save_session(s, tmp_path / "c.tokviz")
    back = load_session(tmp_path / "c.tokviz")
    check_corpus_file(back.corpus)  # unchanged: fine
    f.write_text("hello world\n" * 99 + "hello there\n", encoding="utf-8")
    with pytest.raises(CorpusChangedError, match="has changed since the session was saved"):
        check_corpus_file(back.corpus)
    f.unlink()
    with pytest.raises(CorpusChangedError, match="is missing"):
        check_corpus_file(back.corpus)


@pytest.mark.parametrize("content, message", [
    (b"\x00\x01garbage", "not UTF-8 JSON|not a valid session"),
    (b"{\"format\": \"tokviz-sess", "JSON error at line 1"),
    (b"[1, 2]", "not a tokviz session"),
    (b'{"format": "tokviz-model", "version": 1}', "not a tokviz session"),
    (b'{"format": "tokviz-session", "version": 99}', "version 99 is newer than this tokviz reads"),
    (b'{"format": "tokviz-session"}', "missing format version"),
    (b'{"format": "tokviz-session", "version": 1, "step": -3}', "step must be"),
    (b'{"format": "tokviz-session", "version": 1, "corpus": {"title": "x"}}', "neither text nor path"),
    (b'{"format": "tokviz-session", "version": 1, "model": {"format": "tokviz-model", "version": 1}}',
     "its model"),
    (b'{"format": "tokviz-session", "version": 1, "train_settings": {"algorithm": "zzz"}}', "training settings"),
])
def test_bad_files_give_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.tokviz"
    path.write_bytes(content)
    with pytest.raises(SessionFormatError, match=message) as info:
        load_session(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(SessionFormatError, match="no such file"):
        load_session(tmp_path / "nope.tokviz")


def test_interrupted_save_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "s.tokviz"
    save_session(_session(step=2), path)
    before = path.read_bytes()

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(TokvizError, match="cannot write"):
        save_session(_session(step=7), path)
    assert path.read_bytes() == before  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["s.tokviz"]  # no temporary file left behind
    assert load_session(path).step == 2


def test_save_fsyncs_before_rename(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    save_session(_session(), tmp_path / "f.tokviz")
    assert calls == ["fsync", "replace"]


# -- the GIF / PNG writers used by the animation export ------------------------------------------


def test_lzw_known_answer():
    # clear(4) 0 6("00") 0 end(5), 3-bit codes packed LSB first
    assert lzw_encode(bytes([0, 0, 0, 0]), 2) == bytes([0b10000100, 0b01010001])


def test_changed_box():
    a = np.zeros((10, 20), np.uint8)
    b = a.copy()
    b[3:5, 7:12] = 1
    assert changed_box(None, a) == (0, 0, 20, 10)
    assert changed_box(a, b) == (7, 3, 5, 2)
    assert changed_box(a, a) == (0, 0, 1, 1)


def test_gif_structure():
    frames = [np.full((8, 12, 3), c, np.uint8) for c in (0, 128, 255)]
    data = write_gif(frames, 250, loop=True)
    assert data[:6] == b"GIF89a" and data[-1:] == b"\x3b"
    assert int.from_bytes(data[6:8], "little") == 12 and int.from_bytes(data[8:10], "little") == 8
    assert data.count(b"\x21\xf9\x04") == 3 and b"NETSCAPE2.0" in data
    assert b"NETSCAPE2.0" not in write_gif(frames, 250, loop=False)


def test_png_header():
    png = write_png(np.zeros((5, 7, 3), np.uint8))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 7
