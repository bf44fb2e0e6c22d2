"""A Hugging Face cache someone else filled: revisions that are paths, refs that hold paths, bytes
or gigabytes, snapshots that link out of the cache. Nothing outside the cache is opened, nothing
is read whole, the CLI answers in one line (status 2) and the window opens and lists what is good."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.real_tokenizers import hf_snapshot
from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.hf_cache import MAX_REF_BYTES, cached_tokenizers, known_listing, resolve_hf

GOOD = "a" * 40
OTHER = "b" * 40
BIG = 3 << 30  # a 3 GB file, sparse: it costs nothing on disk


def _tokenizer_json(words: list[str]) -> str:
    vocab = {w: i for i, w in enumerate([*words, "[UNK]"])}
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None,
                       "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
                       "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}})


INSIDE = _tokenizer_json(["hello", "world"])  # "hello world" -> 0 1
OUTSIDE = _tokenizer_json(["x", "y", "hello", "world"])  # "hello world" -> 2 3: a file outside the cache


def _snapshot(cache: Path, name: str, commit: str, files: dict[str, str | bytes], *, main: bool = True) -> Path:
    """`hf_snapshot` (huggingface_hub's layout: blobs/, snapshots/COMMIT/ links, refs/main) of
    files given by their contents."""
    sources = cache.parent / "sources" / name.replace("/", "--") / commit
    sources.mkdir(parents=True, exist_ok=True)
    paths = {}
    for fname, data in files.items():
        paths[fname] = sources / fname
        paths[fname].write_bytes(data.encode() if isinstance(data, str) else data)
    return hf_snapshot(cache, name, commit, paths, main=main)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty hub cache in tmp_path/hub, and tmp_path/outside holding a tokenizer.json: the
    file every escape below would reach (``snapshots/../../../outside`` from a model folder)."""
    hub = tmp_path / "hub"
    hub.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "tokenizer.json").write_text(OUTSIDE, encoding="utf-8")
    return hub


def _refs_main(cache: Path, name: str) -> Path:
    return cache / ("models--" + name.replace("/", "--")) / "refs" / "main"


def _one_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- revisions and refs -------------------------------------------------------------------------


@pytest.mark.parametrize("revision", ["../../../outside", "{outside}", "main/../../../../outside", "..", "a\\b"])
def test_a_revision_that_is_a_path_is_refused(cache, cli, tmp_path, revision):
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE})
    revision = revision.format(outside=tmp_path / "outside")
    line = _one_line(*cli("encode", "--ids", f"hf:org/model@{revision}", "hello world"))
    assert "not a revision" in line and "40-hex commit" in line
    with pytest.raises(ModelFormatError, match="not a revision"):
        resolve_hf(f"hf:org/model@{revision}")
    code, out, err = cli("encode", "--ids", f"hf:org/model@{GOOD}", "hello world")  # a commit still works
    assert (code, out.strip(), err) == (0, "0 1", "")


def test_refs_main_holding_a_path_is_skipped(cache, cli):
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE}, main=False)
    _refs_main(cache, "org/model").parent.mkdir()
    _refs_main(cache, "org/model").write_text("../../../outside", encoding="utf-8")
    assert resolve_hf("hf:org/model").parent.name == GOOD  # the snapshot in the cache, not ../outside
    code, out, err = cli("encode", "--ids", "hf:org/model", "hello world")
    assert (code, out.strip(), err) == (0, "0 1", "")
    line = _one_line(*cli("encode", "--ids", "hf:org/model@main", "hello world"))  # asked for by name
    assert "refs/main: not a commit hash" in line


def test_refs_main_alone_holding_a_path_loads_nothing_outside(cache, cli):
    (cache / "models--org--model" / "refs").mkdir(parents=True)
    (cache / "models--org--model" / "snapshots").mkdir()  # so that snapshots/../../../outside resolves
    _refs_main(cache, "org/model").write_text("../../../outside", encoding="utf-8")
    line = _one_line(*cli("encode", "--ids", "hf:org/model", "hello world"))
    assert "not in the Hugging Face cache" in line and "not a commit hash" in line


def test_refs_main_of_bytes_that_are_not_text(cache, cli):
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE})
    _refs_main(cache, "org/model").write_bytes(b"\xff\xfe\x80\x00" + b"\x81" * 36)
    code, out, err = cli("encode", "--ids", "hf:org/model", "hello world")  # the newest snapshot instead
    assert (code, out.strip(), err) == (0, "0 1", "")
    notes: list[str] = []
    found = cached_tokenizers(notes=notes)
    assert [c.source for c in found] == ["hf:org/model"]
    assert len(notes) == 1 and "refs/main: not a commit hash" in notes[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_refs_main_that_is_a_fifo_is_never_opened_blocking(cache, cli):
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE}, main=False)
    _refs_main(cache, "org/model").parent.mkdir()
    os.mkfifo(_refs_main(cache, "org/model"))
    code, out, err = cli("encode", "--ids", "hf:org/model", "hello world")
    assert (code, out.strip(), err) == (0, "0 1", "")
    assert "not an ordinary file" in _one_line(*cli("encode", "--ids", "hf:org/model@main", "x"))


_LIST_IN_A_SMALL_PROCESS = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
from tokviz.core.formats.hf_cache import cached_tokenizers
found = cached_tokenizers()
print("\n".join(f"{c.source}={c.kind}" for c in found if c.cache == "huggingface"))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="address-space limits are POSIX")
def test_gigabyte_refs_and_models_are_not_read_whole(cache, tmp_path):
    """A 3 GB refs/main and a 3 GB tokenizer.model (both sparse) in the cache: listing the cache
    runs in a process limited to 768 MB of address space, where reading either whole would fail."""
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE})
    with open(_refs_main(cache, "org/model"), "r+b") as f:
        f.truncate(BIG)
    big = _snapshot(cache, "org/huge", OTHER, {"tokenizer.model": b""})
    with open(os.path.realpath(big / "tokenizer.model"), "r+b") as f:
        f.truncate(BIG)
    r = subprocess.run([sys.executable, "-c", _LIST_IN_A_SMALL_PROCESS], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["hf:org/huge=SentencePiece", "hf:org/model=tokenizer.json WordLevel"]
    notes: list[str] = []
    cached_tokenizers(notes=notes)
    assert any(f"more than {MAX_REF_BYTES} bytes" in n for n in notes)


# -- links out of the cache ---------------------------------------------------------------------


def test_a_snapshot_file_linking_outside_the_cache_is_refused(cache, cli, tmp_path):
    snap = cache / "models--org--model" / "snapshots" / GOOD
    snap.mkdir(parents=True)
    os.symlink(tmp_path / "outside" / "tokenizer.json", snap / "tokenizer.json")
    line = _one_line(*cli("encode", "--ids", "hf:org/model", "hello world"))
    assert "points outside the Hugging Face cache" in line
    notes: list[str] = []
    assert cached_tokenizers(notes=notes) == []
    assert any("points outside" in n for n in notes)


def test_a_snapshot_folder_linking_outside_the_cache_is_refused(cache, cli, tmp_path):
    snaps = cache / "models--org--model" / "snapshots"
    snaps.mkdir(parents=True)
    os.symlink(tmp_path / "outside", snaps / GOOD)
    assert "points outside" in _one_line(*cli("encode", "--ids", f"hf:org/model@{GOOD}", "hello world"))


def test_links_into_the_caches_own_blobs_are_followed(cache, tmp_path, monkeypatch):
    """The cache reached through a symlink (a cache on another disk) still counts as inside."""
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE})
    alias = tmp_path / "alias"
    os.symlink(cache, alias)
    monkeypatch.setenv("HF_HUB_CACHE", str(alias))
    assert resolve_hf("hf:org/model") == alias / "models--org--model" / "snapshots" / GOOD / "tokenizer.json"


def test_a_chat_config_linking_outside_the_cache_is_refused(cache, cli, tmp_path):
    snap = _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE})
    secret = tmp_path / "outside" / "tokenizer_config.json"
    secret.write_text(json.dumps({"chat_template": "{{ messages[0]['content'] }}"}), encoding="utf-8")
    os.symlink(secret, snap / "tokenizer_config.json")
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "hello"}]', encoding="utf-8")
    line = _one_line(*cli("chat", "hf:org/model", "-f", str(messages)))
    assert "points outside the Hugging Face cache" in line


# -- the window ---------------------------------------------------------------------------------


def _hostile_cache(cache: Path, tmp_path: Path) -> None:
    """One good model, one whose refs/main is not text (and no snapshot), one linking outside."""
    _snapshot(cache, "good/model", GOOD, {"tokenizer.json": INSIDE})
    (cache / "models--bad--ref" / "refs").mkdir(parents=True)
    _refs_main(cache, "bad/ref").write_bytes(b"\xff\xfe\x80")
    snap = cache / "models--bad--link" / "snapshots" / GOOD
    snap.mkdir(parents=True)
    os.symlink(tmp_path / "outside" / "tokenizer.json", snap / "tokenizer.json")


def _known_actions(window) -> dict:
    assert window.tokenizers.wait_known() in ("listed", "idle")
    return {a.objectName(): a for a in window.menus["known"].actions()}


def test_the_window_opens_and_lists_the_good_entries(make_window, cache, tmp_path, dialogs):
    _hostile_cache(cache, tmp_path)
    window = make_window()
    actions = _known_actions(window)
    hf = sorted(n for n in actions if n.startswith("action_known_hf:"))
    assert hf == ["action_known_hf:good/model"]
    assert "tokenizer.json WordLevel" in actions["action_known_hf:good/model"].text()
    skipped = actions["known_tokenizers_skipped"]
    assert skipped.text() == "Skipped 2 unusable cache entries…"
    skipped.trigger()
    title, notes = dialogs.infos[-1]
    assert "bad--ref/refs/main: not a commit hash" in notes and "bad--link" in notes and "points outside" in notes
    actions["action_known_hf:good/model"].trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    assert window.script.timeline.tokenizer().encode_ids("hello world") == [0, 1]


def test_the_cache_is_looked_through_off_the_gui_thread(make_window, cache, monkeypatch):
    import tokviz.engine.pretrained_tasks as tasks

    _snapshot(cache, "good/model", GOOD, {"tokenizer.json": INSIDE})
    threads = []

    def spy(**kwargs):
        threads.append(threading.current_thread())
        return known_listing(**kwargs)

    monkeypatch.setattr(tasks, "known_listing", spy)
    window = make_window()
    assert "action_known_hf:good/model" in _known_actions(window)
    window.menus["known"].aboutToShow.emit()  # opening the menu looks again, on a thread too
    assert "action_known_hf:good/model" in _known_actions(window)
    assert len(threads) >= 2 and threading.main_thread() not in threads


def test_a_cache_that_cannot_be_listed_leaves_a_working_menu(make_window, cache, monkeypatch):
    import tokviz.engine.pretrained_tasks as tasks

    def broken(**kwargs):
        raise ModelFormatError("the disk went away")

    monkeypatch.setattr(tasks, "known_listing", broken)
    window = make_window()
    assert window.tokenizers.wait_known() in ("failed", "idle")
    actions = {a.objectName(): a for a in window.menus["known"].actions()}
    assert "the disk went away" in actions["known_tokenizers_looking"].text()
    assert "action_open_tokenizer_by_name" in actions


def test_the_window_refuses_a_revision_that_is_a_path(window, cache, dialogs):
    _snapshot(cache, "org/model", GOOD, {"tokenizer.json": INSIDE})
    assert window.script.open_tokenizer("hf:org/model")
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    dialogs.text_answer = "hf:org/model@../../../outside"
    window.commands.open_tokenizer_by_name.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "failed"
    assert "not a revision" in dialogs.errors[-1][1] and "\n" not in dialogs.errors[-1][1]
    assert window.script.timeline.tokenizer().encode_ids("hello world") == [0, 1]  # kept
