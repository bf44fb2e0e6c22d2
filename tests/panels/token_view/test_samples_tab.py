"""The token view's Samples tab: a word's segmentations over N samples, shared out, for a BPE with
dropout P and a Unigram model with alpha, drawn off the GUI thread while the tab shows."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file
from tokviz.core.loading import load_tokenizer
from tokviz.core.registry import make_training
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.panel import TokenViewPanel
from tokviz.panels.token_view.samples_tab import SamplesTab, share_bar

WAIT = 20_000
TEXT = "unbelievable believable unbelievably beliefs relieve " * 20


@pytest.fixture(scope="module")
def sources():
    gpt2 = load_tokenizer(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    unigram = make_training(UnigramSettings(vocab_size=60), texts=[TEXT]).run().tokenizer()
    bert = load_tokenizer(shared_file("vocab", "hf", "bert-base-uncased", "tokenizer.json"))
    return [("GPT-2", gpt2, None), ("Unigram", unigram, None), ("BERT", bert, None)]


def _tab(qtbot):
    tab = SamplesTab()
    qtbot.addWidget(tab)
    tab.resize(900, 500)
    return tab


def test_each_sampling_tokenizer_gets_its_shares(qtbot, sources):
    tab = _tab(qtbot)
    tab.set_word(" unbelievable")
    tab.set_sources(sources)
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.show()
    titles = [s.title for s in tab.shares]
    assert titles == ["GPT-2", "Unigram"]  # BERT's WordPiece samples nothing
    bpe, uni = tab.shares
    assert bpe.how == "BPE-dropout 0.1" and uni.how == "Unigram alpha 0.1"
    for s in tab.shares:
        assert s.n == 200 and sum(r.count for r in s.rows) == 200
        assert [r.count for r in s.rows] == sorted((r.count for r in s.rows), reverse=True)
    assert bpe.rows[0].pieces == ("␣unbelievable",) and len(bpe.rows) > 1
    assert tab.table.item(0, 2).text() == "␣unbelievable"
    assert tab.table.item(0, 3).text().startswith(f"{100 * bpe.rows[0].share:5.1f}%")


def test_dropout_one_and_zero(qtbot, sources):
    tab = _tab(qtbot)
    tab.set_word(" hello")
    tab.set_sources(sources[:1])
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.show()
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.dropout_spin.setValue(1.0)
    assert [(r.pieces, r.share) for r in tab.shares[0].rows] == [(("␣", "h", "e", "l", "l", "o"), 1.0)]
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.dropout_spin.setValue(0.0)
    assert [(r.pieces, r.share) for r in tab.shares[0].rows] == [(("␣hello",), 1.0)]


def test_nothing_is_drawn_while_the_tab_is_hidden(qtbot, sources):
    tab = _tab(qtbot)
    tab.set_sources(sources)
    assert not tab.engine.is_busy and tab.shares == []


def test_no_sampling_tokenizer_says_so(qtbot, sources):
    tab = _tab(qtbot)
    tab.set_sources(sources[2:])
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.show()
    assert tab.shares == [] and "None of these tokenizers" in tab.caption.text()


def test_share_bar():
    assert share_bar(1.0) == "100.0%  " + "█" * 20
    assert share_bar(0.5) == " 50.0%  " + "█" * 10
    assert share_bar(0.0) == "  0.0%  "


def test_the_token_view_has_the_tab(qtbot):
    p = TokenViewPanel(StepModel(), corpus_text=lambda: "")
    qtbot.addWidget(p)
    assert p.tabs.tabText(p.tabs.indexOf(p.samples)) == "Samples"


def test_a_sentencepiece_bpe_model_gets_dropout_shares(qtbot, tmp_path):
    from tests.core.formats.sentencepiece.spm_helpers import trained_model

    sp = load_tokenizer(trained_model("bpe-bytes", tmp_path))
    tab = _tab(qtbot)
    tab.set_word("Everyone")
    tab.set_sources([("SentencePiece BPE", sp, None)])
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.show()
    (shares,) = tab.shares
    assert shares.how == "BPE-dropout 0.1" and shares.n == 200 and len(shares.rows) > 1
    assert shares.rows[0].pieces == tuple(sp.token_text(i).replace("▁", "␣") for i in sp.encode_ordinary("Everyone").ids)
    with qtbot.waitSignal(tab.shares_shown, timeout=WAIT):
        tab.dropout_spin.setValue(1.0)
    assert [r.share for r in tab.shares[0].rows] == [1.0] and len(tab.shares[0].rows[0].pieces) == len("▁Everyone")
