"""The token view's Stream tab: stepping through the ids decoded one at a time."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file
from tokviz.core.loading import open_timeline
from tokviz.engine.step_model import StepModel
from tokviz.panels.token_view.panel import TokenViewPanel
from tokviz.panels.token_view.stream_stepper import StreamStepper

WAIT = 10_000


@pytest.fixture
def gpt2():
    from tokviz.core.loading import load_tokenizer

    return load_tokenizer(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))


def test_stepping_holds_back_a_partial_emoji(qtbot, gpt2):
    s = StreamStepper()
    qtbot.addWidget(s)
    ids = gpt2.encode("hi 👋!").ids
    s.set_source(gpt2, ids)
    assert s.position == 0 and s.text_so_far() == "" and not s.back_button.isEnabled()
    s.next_button.click()
    assert s.text_so_far() == "hi"
    s.next_button.click()  # the emoji's first bytes: nothing yet
    assert s.text_so_far() == "hi" and "held back" in s.step_label.text()
    s.next_button.click()
    assert s.text_so_far() == "hi 👋" and "␣👋" in s.step_label.text()
    s.last_button.click()
    assert s.text_so_far() == "hi 👋!" and not s.next_button.isEnabled()
    s.back_button.click()
    assert s.text_so_far() == "hi 👋"
    s.first_button.click()
    assert s.text_so_far() == ""


def test_a_bad_id_stops_the_stream_with_a_message(qtbot, gpt2):
    s = StreamStepper()
    qtbot.addWidget(s)
    s.set_source(gpt2, [5303, 10 ** 9, 0])
    s.set_position(3)
    assert s.text_so_far() == "hi" and "Cannot stream past id 2" in s.step_label.text()
    assert not s.next_button.isEnabled()


def test_the_tab_follows_the_token_views_tokenizer(qtbot):
    sm = StepModel()
    p = TokenViewPanel(sm, corpus_text=lambda: "")
    qtbot.addWidget(p)
    with qtbot.waitSignal(p.result_shown, timeout=WAIT):
        p.set_text("Größe 東京")
        sm.set_timeline(open_timeline(str(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json"))))
    p.wait_idle()
    with qtbot.waitSignal(p.result_shown, timeout=WAIT):
        p.refresh()
    ids = p.result.reference.encoding.ids
    assert p.stream.slider.maximum() == len(ids) and p.tabs.indexOf(p.stream) >= 0
    p.stream.set_position(len(ids))
    assert p.stream.text_so_far() == p.result.reference.tokenizer.decode(ids)
    p.shutdown()
