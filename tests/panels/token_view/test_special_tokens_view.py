"""Special tokens in the token view and the vocabulary: their flags, and encoding them as text."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from tests.conftest import shared_file
from tokviz.core import TrainSettings, train
from tokviz.core.display.tokens import SPECIAL
from tokviz.core.loading import open_timeline
from tokviz.engine.step_model import StepModel
from tokviz.engine.tables.vocab_model import COL_FLAGS, VocabModel
from tokviz.panels.token_view.panel import TokenViewPanel

WAIT = 10_000


@pytest.fixture
def panel(qtbot):
    tl = train(TrainSettings(merges=20, special_tokens=("<|sep|>",)), texts=["one two three " * 20])
    sm = StepModel()
    p = TokenViewPanel(sm, corpus_text=lambda: "")
    qtbot.addWidget(p)
    p.resize(900, 600)
    p.show()
    with qtbot.waitSignal(p.result_shown, timeout=WAIT):
        p.set_text("one<|sep|>two")
        sm.set_timeline(tl)
    p.wait_idle()
    yield p
    p.shutdown()


def test_specials_as_text_switch(panel, qtbot):
    ref = panel.result.reference
    assert SPECIAL in ref.labels.kinds and "<|sep|>" in ref.labels.labels
    i = ref.labels.kinds.index(SPECIAL)
    assert "added token · special" in panel.tooltip_for(i)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        qtbot.mouseClick(panel.specials_box, Qt.MouseButton.LeftButton)
    panel.wait_idle()
    ref = panel.result.reference
    assert panel.result.request.specials_as_text
    assert SPECIAL not in ref.labels.kinds
    assert b"".join(ref.encoding.tokens) == b"one<|sep|>two"
    assert list(panel.result.batch.batch.ids[0][: len(ref.encoding.ids)]) == ref.encoding.ids  # the batch too


def test_vocabulary_shows_added_token_flags(tmp_path):
    d = json.loads(shared_file("vocab", "hf", "gpt2", "tokenizer.json").read_text(encoding="utf-8"))
    d["added_tokens"].append({"id": 50257, "content": "<pad>", "special": False, "normalized": True, "lstrip": True,
                              "rstrip": False, "single_word": True})
    vm = VocabModel()
    sm = StepModel()
    vm.attach(sm)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    sm.set_timeline(open_timeline(path))
    flags = {vm.token_id(r): vm.data(vm.index(r, COL_FLAGS)) for r in range(vm.rowCount())
             if vm.data(vm.index(r, COL_FLAGS))}
    assert flags == {50256: "special", 50257: "lstrip, normalized, single_word"}
    row = next(r for r in range(vm.rowCount()) if vm.token_id(r) == 50257)
    assert "added token · lstrip · normalized · single_word" in vm.data(vm.index(row, 0), Qt.ItemDataRole.ToolTipRole)
    vm.sort(COL_FLAGS)
    assert {vm.token_id(0), vm.token_id(1)} == {50256, 50257}  # flagged tokens first


def test_trained_special_tokens_are_flagged_special():
    tl = train(TrainSettings(merges=2, special_tokens=("<|sep|>",)), texts=["abab abab"])
    vm = VocabModel()
    vm.set_timeline(tl)
    last = vm.rowCount() - 1
    assert (vm.data(vm.index(last, 1)), vm.data(vm.index(last, COL_FLAGS))) == ("<|sep|>", "special")
    assert vm.data(vm.index(0, COL_FLAGS)) == ""
