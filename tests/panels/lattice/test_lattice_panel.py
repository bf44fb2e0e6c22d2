"""The drawn Unigram lattice: for a model trained here and for a loaded SentencePiece model, opened
from the token view (select a token, "Show lattice"), the best path drawn is the encoder's
segmentation of the word; n-best rows and samples outline their own paths."""

from __future__ import annotations

import pytest

from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.panels.lattice.panel import LatticePanel

CORPUS = ("the unbelievable story of unbelievable believers who believe the story; "
          "a believable tale, unbelievably told, and told again by tellers of tales. ") * 30


def _tiling(path, n):
    """True when the (start, end, piece) bars cover nodes 0..n one after the other."""
    ends = [0] + [b for _, b, _ in path]
    return all(a == e for (a, _, _), e in zip(path, ends)) and ends[-1] == n


def _show_lattice_of_token(window, qtbot, text: str, index: int):
    tv = window.token_view_panel
    tv.set_text(text)
    tv.refresh(delay_ms=0)
    assert tv.wait_idle(qtbot)
    qtbot.waitUntil(lambda: tv.view.token_count == len(tv.result.rows[0].encoding.ids), timeout=10_000)
    tv.view.select(index)
    assert tv.view.selected == index
    tv.lattice.action.trigger()
    panel = window.lattice.panel
    assert isinstance(panel, LatticePanel) and panel.isVisible()
    return panel


@pytest.fixture(scope="module")
def sp_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("sentencepiece-models")


def test_loaded_sentencepiece_model(window, qtbot, dialogs, sp_folder):
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    dialogs.open_answer = str(trained_model("unigram-nmt", sp_folder))
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) == "opened"
    tok = window.script.timeline.tokenizer()
    text = "All human beings are born free and equal in dignity"
    panel = _show_lattice_of_token(window, qtbot, text, 3)
    word = panel.word()
    assert word in text.split() and word
    ids = tok.encode_ids(word)
    drawn = panel.canvas.drawn_best_path()
    assert [p for _, _, p in drawn] == [tok.token_text(i) for i in ids]
    assert _tiling(drawn, len(panel.layout_.word))
    assert panel.layout_.word == tok.normalize(word)
    # every matching piece is drawn, the best path's log-probability is the sum of its scores
    assert len(panel.layout_.edges) >= len(drawn) > 0
    assert panel.layout_.best_log_prob == pytest.approx(sum(tok.score(i) for i in ids), abs=1e-4)
    assert f"log p = {panel.layout_.best_log_prob:.3f}" in panel.caption.text()


def test_trained_unigram_model(window, qtbot):
    window.script.set_corpus_text(CORPUS)
    assert window.script.start_training(UnigramSettings(vocab_size=120, seed_min_count=1))
    assert window.script.wait_for_training(120_000) == "finished"
    tl = window.script.timeline
    window.step_model.set_step(tl.n_steps)
    panel = _show_lattice_of_token(window, qtbot, "an unbelievable story", 1)
    assert panel.word() == "unbelievable"
    step = max(0, min(window.step_model.step, tl.n_rounds - 1))
    tok = tl.tokenizer()
    enc = tok.encode("unbelievable", step=step)
    drawn = panel.canvas.drawn_best_path()
    assert [p for _, _, p in drawn] == [tok.pieces[i - tok.n_special] for i in enc.ids]
    assert [e.id for e in panel.layout_.best_path] == enc.ids
    assert len(drawn) >= 1
    # n best: selecting a row outlines exactly that segmentation's pieces
    assert len(panel.nbest) >= 2
    panel.table.setCurrentCell(1, 0)
    outlined = [panel.layout_.edges[k].piece for k in panel.canvas.highlight]
    assert outlined == list(panel.nbest[1].pieces)
    assert panel.nbest[0].pieces == tuple(p for _, _, p in drawn)
    # samples: drawn with alpha, the last one outlined
    panel.alpha_spin.setValue(0.5)
    lines = panel.sample()
    assert len(lines) == len(panel.sampled) > 0
    assert [panel.layout_.edges[k].piece for k in panel.canvas.highlight] == list(panel.sampled[-1].pieces)


def test_the_panel_alone_keeps_its_state_on_bad_input(qtbot):
    panel = LatticePanel()
    qtbot.addWidget(panel)
    assert "Unigram model" in panel.caption.text()
    panel.set_word("anything")
    assert panel.layout_ is None and panel.canvas.drawn_best_path() == []

    class Broken:
        def explain(self, word, *, step=None, n=5):
            raise ValueError("no such thing")

    panel.set_source(Broken())
    assert "Cannot segment “anything”: no such thing" in panel.caption.text()
    assert panel.layout_ is None


def test_typing_a_word_redraws(qtbot):
    from tokviz.core.unigram.timeline import train_unigram

    tok = train_unigram(UnigramSettings(vocab_size=120, seed_min_count=1), texts=[CORPUS]).tokenizer()
    panel = LatticePanel()
    qtbot.addWidget(panel)
    panel.set_source(tok, 10**9)
    qtbot.keyClicks(panel.word_edit, "believers")
    qtbot.waitUntil(lambda: panel.layout_ is not None and panel.layout_.n_nodes == len("believers") + 1)
    enc = tok.encode("believers")
    assert [p for _, _, p in panel.canvas.drawn_best_path()] == [tok.pieces[i - tok.n_special] for i in enc.ids]
    assert panel.canvas.edge_rect(0).width() > 0
    panel.word_edit.clear()
    qtbot.waitUntil(lambda: panel.layout_ is None)
    assert "Type a word" in panel.caption.text()  # the empty word: no lattice, no error
