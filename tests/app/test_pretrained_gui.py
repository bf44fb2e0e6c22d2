"""Pretrained tokenizers in the window: open (menu, known names, errors, pattern asked),
scrub the merge timeline, trace a word, browse the vocabulary, find glitch tokens."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtWidgets import QMenu

from tests.conftest import shared_file
from tests.qt_fixtures import drain_events
from tokviz.engine.tables.merge_model import COL_COUNT, COL_LEFT, COL_TOKEN

GPT2_VOCAB = ("vocab", "gpt2-data-gym", "vocab.bpe")
R50K = ("vocab", "tiktoken", "r50k_base.tiktoken")


def _open(window, source, qtbot, pattern=None) -> str:
    assert window.script.open_tokenizer(source, pattern=pattern)
    return window.script.wait_for_tokenizer(60_000)


def _wait_vocab(window, qtbot) -> None:
    qtbot.waitUntil(lambda: not window.vocab_panel.is_busy, timeout=30_000)


@pytest.fixture
def gpt2_window(window, qtbot, dialogs):
    """A window with GPT-2 (data-gym files) opened through File > Open Tokenizer…."""
    dialogs.open_answer = str(shared_file(*GPT2_VOCAB))
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    return window


def test_open_tokenizer_menu_makes_it_the_current_model(gpt2_window, qtbot, dialogs):
    w = gpt2_window
    tl = w.step_model.timeline
    assert tl.algorithm == "pretrained" and tl.finished
    assert tl.n_steps == 50_000 and tl.vocab_size == 50_257
    assert w.step_model.step == 50_000
    assert dialogs.errors == []
    assert "gpt2" in w.training_panel.summary.text() or "vocab" in w.training_panel.summary.text()
    assert "50,257 tokens" in w.training_panel.summary.text()
    # the merge table: rank order, pairs known, counts unknown
    mm = w.timeline_panel.merge_model
    assert mm.rowCount() == 50_000
    assert mm.index(0, COL_TOKEN).data() == "␣t"
    assert mm.index(0, COL_LEFT).data() == "␣"
    assert mm.index(0, COL_COUNT).data() == "—"
    # the vocabulary lists every id, specials marked
    assert w.vocab_model.rowCount() == 50_257
    assert w.vocab_model.token_id(43453) == 43453


def test_scrub_timeline_and_trace_a_word(gpt2_window, qtbot):
    w = gpt2_window
    w.corpus_panel.set_text("the lowest tokenization of the corpus")
    panel = w.timeline_panel
    w.step_model.set_step(10)
    panel.refresh()
    assert "Step 10" in panel.corpus_label.text()
    assert "unknown" in panel.cand_label.text()
    assert not panel.tabs.isTabEnabled(0)  # no chart: no counts or lengths
    lines = panel.trace("tokenization")
    assert len(lines[-1].split()) > 4  # only 10 merges: mostly bytes
    w.step_model.set_step(50_000)
    lines = panel.trace("tokenization")
    assert len(lines) > 2
    assert lines[0] == " ".join("tokenization")
    assert lines[-1] == "token ization"
    # merge tree of " token" (id 11241): leaves are its bytes
    panel.show_token(11241, jump=True)  # looking alone keeps the step; this asks to go there
    tree = panel.provenance.tree
    assert tree.topLevelItem(0).text(1) == "11241"
    assert w.step_model.step == w.script.timeline.step_of(11241) + 1


def test_token_view_encodes_with_the_loaded_tokenizer_at_step_k(gpt2_window, qtbot):
    w = gpt2_window
    tv = w.token_view_panel
    tv.set_text(" SolidGoldMagikarp") if hasattr(tv, "set_text") else tv.editor.setPlainText(" SolidGoldMagikarp")
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    assert list(tv.result.rows[0].encoding.ids) == [43453]
    w.step_model.set_step(100)
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    ids = list(tv.result.rows[0].encoding.ids)
    assert len(ids) > 1 and all(i < 256 + 100 for i in ids)


def test_vocabulary_search_filters_and_bad_regex(gpt2_window, qtbot):
    w = gpt2_window
    vp = w.vocab_panel
    vp.set_query("Magikarp")
    _wait_vocab(w, qtbot)
    ids = [w.vocab_model.token_id(r) for r in range(w.vocab_model.rowCount())]
    assert 43453 in ids and all("magikarp" in w.script.timeline.token_bytes()[i].decode().lower() for i in ids)
    vp.set_query(r"^\s\d{3}$", regex=True)
    _wait_vocab(w, qtbot)
    n = w.vocab_model.rowCount()
    assert n > 100
    assert all(len(w.script.timeline.token_bytes()[w.vocab_model.token_id(r)]) == 4 for r in range(n))
    vp.set_query("", filters=("special",))
    _wait_vocab(w, qtbot)
    assert [w.vocab_model.token_id(r) for r in range(w.vocab_model.rowCount())] == [50256]
    vp.set_query("", filters=("partial_utf8",), sort="length")
    _wait_vocab(w, qtbot)
    lengths = [len(w.script.timeline.token_bytes()[w.vocab_model.token_id(r)]) for r in range(w.vocab_model.rowCount())]
    assert lengths == sorted(lengths) and lengths[0] == 1
    before = w.vocab_model.rowCount()
    vp.set_query("(unclosed", regex=True)
    _wait_vocab(w, qtbot)
    assert vp.message_label.isVisibleTo(vp) and "regex" in vp.message_label.text()
    assert w.vocab_model.rowCount() == before  # the rows stay
    vp.set_query("")
    _wait_vocab(w, qtbot)
    assert not vp.message_label.isVisibleTo(vp)
    assert w.vocab_model.rowCount() == 50_257


def test_glitch_finder_finds_solidgoldmagikarp(gpt2_window, qtbot):
    w = gpt2_window
    w.corpus_panel.set_text("The quick brown fox jumps over the lazy dog. " * 20)
    gp = w.script.panel("glitches")
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    assert gp.outcome == "finished"
    assert gp.report.n_unreachable > 0
    assert "Too small to call a token unused" in gp.coverage_label.text()  # 900 characters
    assert gp.select_id(43453)
    row = gp.model.row_of_id(43453)
    assert gp.model.finding(row).reason == "unused" and "never in the corpus" in gp.model.index(row, 6).data()
    # selecting it shows its merge tree and selects it in the vocabulary
    assert w.timeline_panel.provenance.token == 43453
    assert w.vocab_panel.selected_ids() == [43453]


def test_glitch_finder_cancel(gpt2_window, qtbot):
    gp = gpt2_window.script.panel("glitches")
    assert gp.run()
    assert gp.cancel()
    assert gp.outcome == "cancelled" and gp.run_button.isEnabled()


def test_known_tokenizers_menu_lists_names(window):
    menu = window.menus["known"]
    menu.aboutToShow.emit()
    assert window.tokenizers.wait_known() == "listed"
    names = [a.objectName() for a in menu.actions()]
    for n in ("gpt2", "r50k_base", "cl100k_base", "o200k_base"):
        assert f"action_known_{n}" in names


def test_known_name_without_cache_gives_clear_message(window, qtbot, dialogs, monkeypatch, tmp_path):
    import tokviz.core.loading as loader

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    real = loader.find_encoding_file
    monkeypatch.setattr(loader, "find_encoding_file", lambda name, download=True: real(name, download=False))
    assert _open(window, "p50k_base", qtbot) == "failed"
    assert dialogs.errors and "p50k_base" in dialogs.errors[-1][1]
    assert window.step_model.timeline is None or window.step_model.timeline.algorithm != "pretrained"


def test_known_name_from_cache_dir(window, qtbot, dialogs, monkeypatch, tmp_path):
    from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS, cache_path

    src = shared_file(*R50K)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    target = cache_path(KNOWN_ENCODINGS["r50k_base"].url)
    shutil.copy(src, target)
    assert _open(window, "r50k_base", qtbot) == "opened"
    assert window.script.timeline.settings.name == "r50k_base"
    assert window.script.timeline.tokenizer().encode_ids(" SolidGoldMagikarp") == [43453]


def test_garbage_file_error_keeps_the_model(window, qtbot, dialogs, tmp_path):
    bad = tmp_path / "garbage.bin"
    bad.write_bytes(b"\x00\x01 not a tokenizer at all \xff")
    assert _open(window, bad, qtbot) == "failed"
    assert dialogs.errors and dialogs.errors[-1][0] == "Could not open the tokenizer"
    assert "not a tokenizer file" in dialogs.errors[-1][1]
    assert window.step_model.timeline is None


def _unknown_tiktoken(tmp_path):
    lines = shared_file(*R50K).read_text().splitlines()[:400]
    path = tmp_path / "mine.tiktoken"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_unknown_tiktoken_asks_for_the_pattern(window, qtbot, dialogs, tmp_path):
    path = _unknown_tiktoken(tmp_path)
    dialogs.text_answer = "gpt2"
    assert window.script.open_tokenizer(path)
    qtbot.waitUntil(lambda: window.tokenizers.outcome == "opened", timeout=30_000)
    assert dialogs.asked_text and "split pattern" in dialogs.asked_text[0][1]
    from tokviz.core.text.split import SPLIT_PRESETS

    assert window.script.timeline.vocab_size == 400 and window.script.timeline.settings.pattern == SPLIT_PRESETS["gpt2"]


def test_unknown_tiktoken_pattern_cancelled(window, qtbot, dialogs, tmp_path):
    path = _unknown_tiktoken(tmp_path)
    dialogs.text_answer = None
    assert _open(window, path, qtbot) == "cancelled"
    assert dialogs.asked_text and dialogs.errors == []
    assert window.step_model.timeline is None


def test_cancel_loading(window, qtbot):
    path = shared_file("vocab", "tiktoken", "cl100k_base.tiktoken")
    assert window.script.open_tokenizer(path)
    assert window.tokenizers.cancel_button.isVisibleTo(window)
    assert window.tokenizers.cancel()
    assert window.tokenizers.outcome == "cancelled"
    assert not window.tokenizers.cancel_button.isVisibleTo(window)
    window.tokenizers.loader.wait_idle()
    drain_events()  # a result queued by the cancelled load would be delivered now
    assert window.step_model.timeline is None  # the stale result never arrives


def test_trained_model_vocabulary_filters(window, qtbot):
    """The browser's filters work on a model trained here too."""
    from tokviz.core import TrainSettings

    window.script.set_corpus_text("abc 123 456 abc  def\n" * 30)
    assert window.script.start_training(TrainSettings(units="bytes", split="gpt4", merges=20, min_count=2))
    assert window.script.wait_for_training(60_000) == "finished"
    vp = window.vocab_panel
    vp.set_query("", filters=("digits",))
    _wait_vocab(window, qtbot)
    ids = [window.vocab_model.token_id(r) for r in range(window.vocab_model.rowCount())]
    vocab = window.script.timeline.token_bytes()
    assert ids and all(vocab[i].strip().isdigit() for i in ids)
    assert any(len(vocab[i]) > 1 for i in ids)


def test_vocab_model_contract_with_a_loaded_tokenizer(gpt2_window, qtmodeltester):
    qtmodeltester.check(gpt2_window.vocab_model)  # Qt's own tester: the Python one takes ~25 s on 50k rows
    qtmodeltester.check(gpt2_window.script.panel("glitches").model)


def test_file_menu_has_the_tokenizer_entries(window):
    file_menu = window.menus["file"]
    assert window.commands.open_tokenizer in file_menu.actions()
    assert window.menus["known"].menuAction() in file_menu.actions()
    assert isinstance(window.menus["known"], QMenu)
    assert window.commands.open_tokenizer.shortcut().toString() == "Ctrl+Alt+O"


def test_heatmaps_follow_a_loaded_tokenizer(gpt2_window, qtbot):
    """The embedding panel tokenizes the corpus with the loaded tokenizer at step k (vocab size 50,257)."""
    w = gpt2_window
    p = w.embedding_panel
    w.script.select_panel("embeddings")  # on screen it follows the step (behind a tab it waits: test_hidden_panels)
    w.corpus_panel.set_text("the SolidGoldMagikarp of the corpus\n\nanother paragraph here")
    w.step_model.set_step(200)
    qtbot.waitUntil(lambda: p.corpus is not None and p.corpus.step == 200, timeout=30_000)  # the newest request wins
    c = p.corpus
    assert c.step == 200 and c.n_vocab == 50_257
    assert max(c.text_ids, default=0) < 256 + 200
    w.script.select_panel("positional")
    drain_events()
    w.script.select_panel("embeddings")
    with qtbot.waitSignal(p.heatmap_shown, timeout=30_000):
        p.retokenize()


def test_save_model_of_a_loaded_tokenizer_explains(gpt2_window, dialogs):
    assert not gpt2_window.files.save_model_dialog()
    assert dialogs.infos and "not a tokviz model" in dialogs.infos[-1][1]


@pytest.mark.parametrize("parts, word, n_vocab", [
    (("vocab", "hf", "bert-base-uncased", "tokenizer.json"), "tokenization", 30_522),
    (("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json"), "tokenization", 32_000),
])
def test_other_tokenizer_json_files_drive_every_panel(window, qtbot, dialogs, parts, word, n_vocab):
    assert _open(window, shared_file(*parts), qtbot) == "opened"
    tl = window.script.timeline
    assert tl.vocab_size == n_vocab and window.vocab_model.rowCount() == n_vocab
    window.corpus_panel.set_text(f"{word} of the corpus")
    window.step_model.set_step(tl.n_steps // 2)
    window.timeline_panel.refresh()
    lines = window.timeline_panel.trace(word)
    assert lines and lines[-1].replace(" ", "").replace("##", "").lower().endswith("ation")
    tv = window.token_view_panel
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    assert tv.result.rows and tv.result.rows[0].encoding.ids
    window.vocab_panel.set_query("", filters=("special",))
    _wait_vocab(window, qtbot)
    assert 0 < window.vocab_model.rowCount() < 20
    assert dialogs.errors == []


def test_o200k_opens_without_building_its_merge_list(window, qtbot):
    """200k merges: panels read only the rows they show (the full list takes seconds)."""
    assert _open(window, shared_file("vocab", "tiktoken", "o200k_base.tiktoken"), qtbot) == "opened"
    tl = window.script.timeline
    drain_events()
    built = tl.steps.n_built
    assert tl.n_steps == 199_742 and built < 2_000, built
    assert window.vocab_model.rowCount() == tl.vocab_size == 200_019
    table = window.vocab_panel.table
    bar = table.verticalScrollBar()
    for frac in (0.5, 1.0):
        bar.setValue(int(bar.maximum() * frac))
        table.viewport().repaint()
    window.step_model.set_step(150_000)
    window.timeline_panel.refresh()
    assert window.timeline_panel.merge_model.index(149_999, 4).data() == str(tl.steps[149_999].id)


def test_glitch_finder_on_a_trained_model(window, qtbot):
    from tokviz.core import TrainSettings

    window.script.set_corpus_text("low lower lowest newer newest " * 20)
    assert window.script.start_training(TrainSettings(units="bytes", split="gpt4", merges=12, min_count=2))
    assert window.script.wait_for_training(60_000) == "finished"
    gp = window.script.panel("glitches")
    with qtbot.waitSignal(gp.report_ready, timeout=60_000):
        assert gp.run()
    assert gp.outcome == "finished"
    assert gp.report.n_tokens == window.script.timeline.vocab_size
    unused = {r.id for r in gp.report.rows if r.reason == "unused"}
    assert ord("z") in unused  # a byte the corpus never has
    used_merged = [i for i in range(256, window.script.timeline.vocab_size) if i not in unused]
    assert used_merged  # merged tokens of the corpus itself occur


def test_open_tokenizer_folder_menu(window, qtbot, dialogs):
    """File > Open Tokenizer Folder…: a Hugging Face folder (tokenizer.json inside) opens; a folder
    with nothing tokviz reads is a clear error and the current model stays."""
    folder = shared_file("vocab", "hf", "bert-base-uncased")
    dialogs.folder_answer = str(folder)
    window.commands.open_tokenizer_folder.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tl = window.step_model.timeline
    assert tl.algorithm == "pretrained" and tl.vocab_size == 30_522
    dialogs.folder_answer = str(shared_file("corpora"))
    window.commands.open_tokenizer_folder.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "failed"
    assert dialogs.errors and "tokenizer" in dialogs.errors[-1][1].lower()
    assert window.step_model.timeline is tl
    n_errors = len(dialogs.errors)
    dialogs.folder_answer = None  # cancelled: nothing happens
    window.commands.open_tokenizer_folder.trigger()
    assert not window.tokenizers.is_loading and len(dialogs.errors) == n_errors
    assert window.step_model.timeline is tl
