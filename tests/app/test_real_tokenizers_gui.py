"""SentencePiece models, Unigram tokenizer.json files and the Hugging Face cache in the window:
File > Known Tokenizers lists the caches with size and kind, Open by Name takes ``hf:ORG/NAME``,
every panel works with the loaded model, and a bad file keeps the current tokenizer."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.conftest import shared_file
from tests.real_tokenizers import hf_snapshot

MISTRAL_MODEL = ("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model")


@pytest.fixture(scope="module")
def sp_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("sentencepiece-models")


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    hf_snapshot(cache, "mistralai/Mistral-7B-v0.1", "c" * 40, {"tokenizer.model": shared_file(*MISTRAL_MODEL)})
    hf_snapshot(cache, "openai-community/gpt2", "d" * 40, {"tokenizer.json": shared_file("vocab", "hf", "gpt2",
                                                                                         "tokenizer.json")})
    return cache


def test_known_tokenizers_list_the_hugging_face_cache(window, qtbot, hf_cache):
    menu = window.menus["known"]
    menu.aboutToShow.emit()  # looks through the caches again, on a background thread
    assert window.tokenizers.wait_known() == "listed"
    actions = {a.objectName(): a for a in menu.actions()}
    mistral = actions["action_known_hf:mistralai/Mistral-7B-v0.1"]
    assert "SentencePiece bpe" in mistral.text() and "493 KB" in mistral.text()
    assert "tokenizer.json BPE" in actions["action_known_hf:openai-community/gpt2"].text()
    assert any(str(hf_cache) in a.text() for a in menu.actions())
    mistral.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    assert window.script.timeline.settings.name == "mistralai/Mistral-7B-v0.1"
    assert window.script.timeline.tokenizer().encode_ids("Hello world!") == [22557, 1526, 28808]


def test_open_by_name(window, qtbot, dialogs, hf_cache):
    dialogs.text_answer = "hf:openai-community/gpt2"
    window.commands.open_tokenizer_by_name.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    assert window.script.timeline.tokenizer().encode_ids(" SolidGoldMagikarp") == [43453]
    dialogs.text_answer = "hf:nobody/nothing"
    window.commands.open_tokenizer_by_name.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "failed"
    assert "models--nobody--nothing" in dialogs.errors[-1][1]
    assert window.script.timeline.tokenizer().encode_ids(" SolidGoldMagikarp") == [43453]  # kept


@pytest.mark.parametrize("kind", ["sentencepiece-bpe", "sentencepiece-unigram", "hf-unigram"])
def test_every_panel_with_the_new_families(window, qtbot, dialogs, sp_folder, tmp_path, kind):
    if kind == "sentencepiece-bpe":
        path = shared_file(*MISTRAL_MODEL)
    elif kind == "sentencepiece-unigram":
        from tests.core.formats.sentencepiece.spm_helpers import trained_model

        path = trained_model("unigram-nmt", sp_folder)
    else:
        from tests.core.formats.tokenizer_json.hf_unigram_helpers import built, t5_like

        path = tmp_path / "tokenizer.json"
        path.write_text(built("t5-like", sp_folder, t5_like)[1], encoding="utf-8")
    dialogs.open_answer = str(path)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tl = window.script.timeline
    assert window.vocab_model.rowCount() == tl.vocab_size
    window.corpus_panel.set_text("tokenization of the corpus, ünïcödé 🤗")
    window.step_model.set_step(tl.n_steps // 2)
    window.timeline_panel.refresh()
    lines = window.timeline_panel.trace("tokenization")
    assert lines and lines[-1].replace(" ", "").replace("▁", "").endswith("ation")
    tv = window.token_view_panel
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    assert tv.result.rows and tv.result.rows[0].encoding.ids
    assert dialogs.errors == []


def test_a_bad_model_file_keeps_the_current_tokenizer(window, qtbot, dialogs, tmp_path):
    dialogs.open_answer = str(shared_file(*MISTRAL_MODEL))
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    bad = tmp_path / "broken.model"
    bad.write_bytes(shared_file(*MISTRAL_MODEL).read_bytes()[:5000])
    dialogs.open_answer = str(bad)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "failed"
    assert "truncated" in dialogs.errors[-1][1]
    assert window.script.timeline.tokenizer().encode_ids("Hello world!") == [22557, 1526, 28808]


def test_a_loaded_unigram_model_is_explained(window, qtbot, dialogs, sp_folder):
    """Segmentations tab (n best with probabilities, samples), scores in the vocabulary, glitches."""
    from tests.core.formats.sentencepiece.spm_helpers import trained_model
    from tokviz.engine.tables.vocab_model import COL_COUNT

    dialogs.open_answer = str(trained_model("unigram-nmt", sp_folder))
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    panel = window.timeline_panel
    seg = panel.unigram.segmentations
    assert panel.tabs.isTabVisible(panel.tabs.indexOf(seg))
    assert not panel.tabs.isTabVisible(panel.tabs.indexOf(panel.unigram.chart))
    seg.set_word("Declaration")
    assert len(seg.nbest) == seg.n_spin.value() and "segmentations of “▁Declaration”" in seg.label.text()
    assert list(seg.nbest[0].ids) == window.script.timeline.tokenizer().encode_ids("Declaration")
    assert len(seg.sample()) > 0
    model = window.vocab_model
    assert model.headerData(COL_COUNT, Qt.Orientation.Horizontal) == "Score"
    tok = window.script.timeline.tokenizer()
    row = model.row_of_id(tok.piece_to_id("▁the"))
    assert float(model.index(row, COL_COUNT).data()) == pytest.approx(tok.score(tok.piece_to_id("▁the")), abs=1e-4)
