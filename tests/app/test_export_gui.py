"""File > Export Tokenizer: a BPE trained in the window exports through the menu to a
tokenizer.json that `tokenizers` loads and a .tiktoken (+ pattern sidecar) that `tiktoken` loads,
both with tokviz's ids, at every merge or only the current step; models with no exact form keep
the actions disabled and say why; write errors show a message and leave no file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokviz.core import TrainSettings, train
from tokviz.core.saved.tokenizer_export import export_tokenizer_json
from tokviz.core.unigram.timeline import UnigramSettings

CORPUS = (
    "The quick brown fox jumps over the lazy dog. It's 2024: naïve café owners cheer! \r\n"
    "Ein Tokenizer zerlegt Wörter in Stücke; 東京は大きい都市です。 Emoji 👋🏽 and 🇫🇷 flags.\n"
    "lower lowest newer newest wider widest 12345 67890 \t tabs\n"
) * 12
TEXTS = [
    "The lazy dog jumps again, 2025!",
    "naïve Wörter 東京 👋🏽👨‍👩‍👧 🇫🇷",
    "line one\r\nline two\r\n\r\n  indented\tand    long   spaces   ",
    "unseen: Ωμέγα ∮ 漢字 \u0301combining",
    "",
]
SPECIAL = "<|end|>"


def _train_bpe(window, **kwargs):
    window.script.set_corpus_text(CORPUS, word_counts=False)
    settings = TrainSettings(**{"merges": 120, "min_count": 1, "special_tokens": (SPECIAL,), **kwargs})
    assert window.script.start_training(settings)
    assert window.script.wait_for_training(60_000) == "finished"
    return window.script.timeline


def _export_through_menu(window, qtbot, dialogs, path: Path, action) -> None:
    dialogs.save_path_answer = str(path)
    with qtbot.waitSignal(window.exporter.exported, timeout=30_000) as blocker:
        action.trigger()
        assert window.exporter.is_running  # written on the worker thread, not in the click
    assert blocker.args == [str(path)]


def _load_tiktoken(path: Path):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    side = json.loads(path.with_name(path.name + ".json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(side["name"], pat_str=side["pattern"], mergeable_ranks=load_tiktoken_bpe(str(path)),
                             special_tokens=side["special_tokens"])


@pytest.fixture
def out(tmp_path) -> Path:
    """An empty folder for exports (tmp_path also holds the window's settings)."""
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


@pytest.fixture
def bpe_window(window):
    _train_bpe(window)
    return window


def test_menu_exports_both_formats_with_identical_ids(bpe_window, qtbot, dialogs, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    w = bpe_window
    a = w.commands
    assert a.export_hf.isEnabled() and a.export_tiktoken.isEnabled()
    assert a.export_hf in w.menus["export"].actions() and a.export_at_step in w.menus["export"].actions()
    ours = w.script.timeline.tokenizer()
    assert w.script.timeline.n_steps == 120

    _export_through_menu(w, qtbot, dialogs, tmp_path / "tokenizer.json", a.export_hf)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.get_vocab_size() == w.script.timeline.vocab_size
    for text in TEXTS:
        ids = ours.encode_ordinary(text).ids
        assert hf.encode(text).ids == ids
        assert hf.decode(ids) == text
    assert "Exported tokenizer.json: 377 tokens, 120 merges" in w.statusBar().currentMessage()

    _export_through_menu(w, qtbot, dialogs, tmp_path / "mine.tiktoken", a.export_tiktoken)
    enc = _load_tiktoken(tmp_path / "mine.tiktoken")
    assert enc.name == "mine" and enc.n_vocab == w.script.timeline.vocab_size
    for text in TEXTS:
        assert enc.encode_ordinary(text) == ours.encode_ordinary(text).ids
    mixed = f"a{SPECIAL}b 👋🏽"
    assert enc.encode(mixed, allowed_special="all") == ours.encode(mixed, allowed_special="all").ids
    assert dialogs.errors == []
    assert w.settings_store.last_dir() == str(tmp_path)


def test_export_at_the_current_step(bpe_window, qtbot, dialogs, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    w = bpe_window
    ours = w.script.timeline.tokenizer()
    w.step_model.set_step(25)
    w.commands.export_at_step.setChecked(True)
    w.menus["export"].aboutToShow.emit()
    assert w.commands.export_at_step.text() == "At the Current Step Only (first 25 of 120 merges)"
    _export_through_menu(w, qtbot, dialogs, tmp_path / "k25.json", w.commands.export_hf)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "k25.json"))
    _export_through_menu(w, qtbot, dialogs, tmp_path / "k25.tiktoken", w.commands.export_tiktoken)
    enc = _load_tiktoken(tmp_path / "k25.tiktoken")
    for text in TEXTS:
        at_k = ours.encode_ordinary(text, step=25).ids
        assert hf.encode(text).ids == at_k and enc.encode_ordinary(text) == at_k
        if text:
            assert at_k != ours.encode_ordinary(text).ids  # 25 merges really is fewer than 120
    assert len(json.loads((tmp_path / "k25.json").read_text(encoding="utf-8"))["model"]["merges"]) == 25

    # the scripting surface: step given explicitly, waits until written
    assert w.script.export_tokenizer(tmp_path / "k7.tiktoken", "tiktoken", step=7)
    assert len((tmp_path / "k7.tiktoken").read_text().splitlines()) == 256 + 7
    assert w.script.export_tokenizer(tmp_path / "all.json")
    assert len(json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))["model"]["merges"]) == 120
    assert dialogs.errors == []


def test_actions_disabled_with_the_reason(window, qtbot, dialogs, out):
    a = window.commands
    assert window.script.timeline is None
    assert not a.export_hf.isEnabled() and not a.export_at_step.isEnabled()
    assert a.export_hf.statusTip().startswith("No model yet")

    window.script.set_corpus_text(CORPUS, word_counts=False)
    assert window.script.start_training(UnigramSettings(vocab_size=120, seed_min_count=1))
    assert window.script.wait_for_training(60_000) == "finished"
    assert window.script.timeline.algorithm == "unigram"
    for action in (a.export_hf, a.export_tiktoken):
        assert not action.isEnabled()
        assert action.statusTip().startswith("Unigram models are not exported")
        assert action.toolTip() == action.statusTip()
    assert not window.script.export_tokenizer(out / "u.json")  # refused for scripts too, with a message
    assert dialogs.errors[-1][0] == "Cannot export this tokenizer" and "Unigram" in dialogs.errors[-1][1]
    assert not list(out.iterdir())

    # BPE on characters: tokenizer.json yes, tiktoken (byte-level only) no
    chars = train(TrainSettings(units="chars", merges=20), texts=[CORPUS])
    window.training.show_model(chars, out / "chars.json")
    assert a.export_hf.isEnabled() and a.export_hf.statusTip().startswith("Write the current BPE model")
    assert not a.export_tiktoken.isEnabled() and "byte-level" in a.export_tiktoken.statusTip()

    # a loaded tokenizer (here: a tokenizer.json tokviz wrote) is not re-exported
    export_tokenizer_json(train(TrainSettings(merges=20), texts=[CORPUS]), out / "loaded.json")
    assert window.script.open_tokenizer(out / "loaded.json")
    assert window.script.wait_for_tokenizer(30_000) == "opened"
    assert window.script.timeline.algorithm == "pretrained"
    assert not a.export_hf.isEnabled() and "loaded from" in a.export_hf.statusTip()


def test_write_errors_show_a_message_and_leave_no_file(bpe_window, qtbot, dialogs, out):
    w = bpe_window
    blocker = out / "a-file"
    blocker.write_text("not a folder")
    dialogs.save_path_answer = str(blocker / "tokenizer.json")  # a folder that cannot hold files
    with qtbot.waitSignal(w.exporter.export_failed, timeout=30_000):
        w.commands.export_hf.trigger()
    assert dialogs.errors[-1][0] == "Could not export the tokenizer"
    assert "cannot write" in dialogs.errors[-1][1]
    assert w.exporter.outcome == "failed"

    # the sidecar cannot be written: the .tiktoken is not left without its pattern
    (out / "x.tiktoken.json").mkdir()
    assert not w.script.export_tokenizer(out / "x.tiktoken", "tiktoken")
    assert not (out / "x.tiktoken").exists()
    assert len(dialogs.errors) == 2 and "x.tiktoken.json" in dialogs.errors[-1][1]
    assert sorted(p.name for p in out.iterdir()) == ["a-file", "x.tiktoken.json"]

    # cancelling the file dialog writes nothing
    dialogs.save_path_answer = None
    w.commands.export_tiktoken.trigger()
    assert not w.exporter.is_running and len(dialogs.errors) == 2
