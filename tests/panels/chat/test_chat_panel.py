"""The Chat view, used as a user would: open a folder, type, add, remove, reorder, change roles,
toggle the generation prompt and specials, click findings and tokens; bad folders and failing
templates leave the messages alone."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from tests.core.chat import folders
from tokviz.core.chat import load_chat_model, render_chat
from tokviz.core.display.tokens import SPECIAL
from tokviz.panels.chat.panel import SAMPLE_MESSAGES, ChatPanel

WAIT = 15_000
CLICK = Qt.MouseButton.LeftButton


@pytest.fixture
def chatml(tmp_path):
    return folders.chatml(tmp_path)


@pytest.fixture
def panel(qtbot):
    p = ChatPanel()
    qtbot.addWidget(p)
    p.resize(1200, 700)
    p.show()
    yield p
    p.shutdown()


def open_with_button(panel, qtbot, folder):
    """Click "Open model folder…" (the folder dialog answers `folder`) and wait for the render."""
    panel.folder_dialog = lambda: str(folder)
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        qtbot.mouseClick(panel.open_button, CLICK)
    panel.wait_idle()


def rerender(panel, qtbot, action):
    with qtbot.waitSignal(panel.result_shown, timeout=WAIT):
        action()
    panel.wait_idle()


def expected(folder, messages, **kw):
    return render_chat(load_chat_model(folder), messages, **kw)


def test_open_a_folder_and_see_the_prompt(panel, qtbot, chatml):
    assert panel.view.token_count == 0 and "Open a model folder" in panel.view.placeholder()
    open_with_button(panel, qtbot, chatml)
    want = expected(chatml, SAMPLE_MESSAGES)
    r = panel.result.render
    assert (r.text, r.ids) == (want.text, want.ids)
    assert panel.view.token_count == len(want.ids)
    kinds = panel.result.display.labels.kinds
    assert [i for i, k in enumerate(kinds) if k == SPECIAL] == want.encoding.special  # badges
    assert "chatml" in panel.model_label.text() and panel.template_view.toPlainText() == folders.CHATML
    assert panel.status.text().startswith(f"<b>{len(want.ids)} tokens</b>")
    infos = [row.info.text() for row in panel.messages_view.rows]
    assert infos == [f"<b>{m.n_tokens} tokens</b>" for m in want.messages]
    (a, b), (i, j) = want.messages[1].span, want.messages[1].tokens
    assert panel.messages_view.rows[1].info.toolTip() == f"Characters {a}–{b} of the prompt, tokens {i}–{j - 1}"


def test_typing_in_a_message_rerenders(panel, qtbot, chatml):
    open_with_button(panel, qtbot, chatml)
    editor = panel.messages_view.rows[3].editor
    editor.setFocus()
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    rerender(panel, qtbot, lambda: qtbot.keyClicks(editor, " Tell me\tmore"))
    rerender(panel, qtbot, lambda: editor.insertPlainText(" 👋\r\n"))  # pasted (key clicks are UTF-16 units)
    messages = panel.messages()
    assert messages[3]["content"] == "And of Japan?   Tell me\tmore 👋\n"  # Qt's editor keeps \n of a pasted \r\n
    assert panel.result.render.ids == expected(chatml, messages).ids
    assert panel.result.request.messages[3]["content"] == messages[3]["content"]


def test_add_remove_reorder_and_change_roles(panel, qtbot, chatml):
    open_with_button(panel, qtbot, chatml)
    ml = panel.messages_view
    rerender(panel, qtbot, lambda: qtbot.mouseClick(ml.add_button, CLICK))
    assert [m["role"] for m in panel.messages()][-1] == "assistant"  # after a user message
    rerender(panel, qtbot, lambda: qtbot.keyClicks(ml.rows[-1].editor, "Tokyo."))
    assert panel.messages()[-1] == {"role": "assistant", "content": "Tokyo."}
    rerender(panel, qtbot, lambda: qtbot.mouseClick(ml.rows[-1].up_button, CLICK))
    assert [m["content"] for m in panel.messages()][-2:] == ["Tokyo.", "And of Japan?  "]
    assert not ml.rows[0].up_button.isEnabled() and not ml.rows[-1].down_button.isEnabled()
    rerender(panel, qtbot, lambda: qtbot.mouseClick(ml.rows[0].remove_button, CLICK))
    assert len(panel.messages()) == 4 and panel.messages()[0]["role"] == "user"
    # ChatML adds its default system prompt when the first message is not one
    assert panel.result.render.text.startswith("<|im_start|>system\nYou are a helpful assistant.")

    def set_role():
        combo = ml.rows[0].role_box
        combo.setFocus()
        combo.lineEdit().selectAll()
        qtbot.keyClicks(combo.lineEdit(), "narrator")
    rerender(panel, qtbot, set_role)
    assert panel.messages()[0]["role"] == "narrator"
    assert "<|im_start|>narrator\n" in panel.result.render.text
    assert panel.result.render.ids == expected(chatml, panel.messages()).ids


def test_generation_prompt_and_specials_as_text(panel, qtbot, chatml):
    open_with_button(panel, qtbot, chatml)
    rerender(panel, qtbot, lambda: qtbot.mouseClick(panel.generation_box, CLICK))
    assert panel.result.render.text.endswith("<|im_start|>assistant\n")
    rerender(panel, qtbot, lambda: qtbot.keyClicks(panel.messages_view.rows[1].editor, "<|im_end|>"))
    end = load_chat_model(chatml).token_id("<|im_end|>")
    typed = panel.result.render.ids.count(end)
    (f,) = [f for f in panel.result.findings if f.rule == "special-in-content"]
    assert f.severity == "error"
    rerender(panel, qtbot, lambda: qtbot.mouseClick(panel.specials_box, CLICK))
    assert panel.result.render.ids.count(end) == typed - 1
    assert panel.result.render.ids == expected(chatml, panel.messages(), add_generation_prompt=True,
                                               specials_as_text=True).ids


def test_findings_and_message_focus_point_at_tokens(panel, qtbot, chatml):
    open_with_button(panel, qtbot, chatml)
    findings = panel.result.findings
    (f,) = [f for f in findings if f.rule == "whitespace-special"]  # "And of Japan?  " then <|im_end|>
    row = findings.index(f)
    qtbot.mouseClick(panel.findings.viewport(), CLICK, pos=panel.findings.visualItemRect(panel.findings.item(row)).center())
    assert panel.view.selected == min(f.tokens)
    assert panel.view.outlined == list(f.tokens)
    qtbot.mouseClick(panel.messages_view.rows[2].editor.viewport(), CLICK)
    m = panel.result.render.messages[2]
    assert panel.view.outlined == list(range(*m.tokens))
    assert "message 3 (assistant)" in panel.tooltip_for(m.tokens[0])
    assert "added token · special" in panel.tooltip_for(0) and "written by the template" in panel.tooltip_for(0)


def test_a_failing_template_keeps_the_messages(panel, qtbot, tmp_path):
    folder = folders.write_folder(tmp_path / "bad", "gpt2", "{% for m in messages %}\n{{ m.content }}\n"
                                  "{% if m.role == 'tool' %}{{ raise_exception('no tools here') }}{% endif %}"
                                  "{% endfor %}", added=folders.CHATML_TOKENS)
    open_with_button(panel, qtbot, folder)
    assert panel.result.error is None and panel.view.token_count > 0
    combo = panel.messages_view.rows[2].role_box
    rerender(panel, qtbot, lambda: combo.setCurrentText("tool"))
    assert panel.result.error is not None and panel.result.error.line == 3
    assert panel.banner.isVisible() and "no tools here" in panel.banner.text()
    assert panel.view.token_count == 0
    assert [(f.rule, f.line) for f in panel.result.findings] == [("template-error", 3)]
    marks = panel.template_view.extraSelections()
    assert len(marks) == 1 and marks[0].cursor.block().blockNumber() == 2
    assert [m["role"] for m in panel.messages()] == ["system", "user", "tool", "user"]
    rerender(panel, qtbot, lambda: combo.setCurrentText("assistant"))  # fixed: the prompt is back
    assert panel.result.error is None and not panel.banner.isVisible() and panel.view.token_count > 0


def test_a_folder_without_a_template_is_explained(panel, qtbot, chatml, tmp_path):
    open_with_button(panel, qtbot, chatml)
    before = panel.messages()
    plain = folders.write_folder(tmp_path / "plain", "gpt2", "x")
    (plain / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|endoftext|>"}))
    open_with_button(panel, qtbot, plain)
    assert panel.banner.isVisible() and "no chat template" in panel.banner.text()
    assert panel.messages() == before and panel.model.folder == chatml  # the previous model stays


def test_the_window_has_the_chat_view_and_it_follows_the_tokenizer(window, qtbot, chatml):
    window.docks.goto_action("chat").trigger()
    chat = window.script.panel("chat")
    assert window.docks.dock("chat").isVisible()
    with qtbot.waitSignal(chat.result_shown, timeout=WAIT):
        assert window.script.open_tokenizer(chatml)
        assert window.script.wait_for_tokenizer(WAIT) == "opened"
    chat.wait_idle()
    assert chat.model is not None and chat.model.folder == chatml
    assert chat.result.render.ids == expected(chatml, chat.messages()).ids


def test_messages_from_a_file_keep_crlf_until_edited(panel, qtbot, chatml, tmp_path):
    open_with_button(panel, qtbot, chatml)
    path = tmp_path / "m.json"
    messages = [{"role": "user", "content": "line one\r\nline two\r\n"}, {"role": "assistant", "content": "ok"}]
    path.write_text(json.dumps(messages), encoding="utf-8")
    panel.messages_dialog = lambda: str(path)
    rerender(panel, qtbot, lambda: qtbot.mouseClick(panel.load_button, CLICK))
    assert panel.messages() == messages
    assert panel.result.render.ids == expected(chatml, messages).ids  # the \r\n reached the template
    rerender(panel, qtbot, lambda: qtbot.keyClicks(panel.messages_view.rows[1].editor, "!"))
    assert panel.messages()[0]["content"] == messages[0]["content"]  # the other message is untouched
    (tmp_path / "bad.json").write_text("[{\"role\": 1}]")
    panel.messages_dialog = lambda: str(tmp_path / "bad.json")
    qtbot.mouseClick(panel.load_button, CLICK)
    assert panel.banner.isVisible() and 'no &quot;role&quot;' in panel.banner.text()
    assert len(panel.messages()) == 2


def test_session_state_round_trip(panel, qtbot, chatml):
    from tokviz.panels.view_state import restore_view_state, view_state

    open_with_button(panel, qtbot, chatml)
    rerender(panel, qtbot, lambda: qtbot.mouseClick(panel.generation_box, CLICK))
    panel.set_messages([{"role": "user", "content": "kept\r\n"}])
    state = json.loads(json.dumps(view_state(panel)))
    other = ChatPanel()
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.result_shown, timeout=WAIT):
        restore_view_state(other, state)
    other.wait_idle()
    assert view_state(other) == state and other.model.folder == chatml
    assert other.result.render.text.endswith("<|im_start|>assistant\n")
    restore_view_state(other, {"messages": "not a list", "folder": 3, "whitespace": "yes"})  # skipped, no error
    assert other.messages() == [{"role": "user", "content": "kept\r\n"}] and not other.whitespace_box.isChecked()
    other.shutdown()


def test_the_template_set_chooser_renders_the_chosen_template(panel, qtbot, tmp_path):
    """A named set: the chooser lists every template, and choosing one renders with it."""
    folder = folders.named_set(tmp_path)
    open_with_button(panel, qtbot, folder)
    box = panel.template_box
    assert box.isVisible() and [box.itemText(i) for i in range(box.count())] == ["default", "tool_use", "rag"]
    assert panel.result.render.template_name == "default"
    rerender(panel, qtbot, lambda: box.setCurrentText("rag"))
    want = render_chat(load_chat_model(folder, template="rag"), panel.messages())
    assert (panel.result.render.text, panel.result.render.template_name) == (want.text, "rag")
    assert "<|start_of_role|>" in want.text and panel.template_view.toPlainText() == folders.RAG


def test_the_assistant_mask_is_outlined(panel, qtbot, tmp_path):
    """Checking "Assistant mask" outlines the tokens inside the generation blocks (the render's
    mask, equal to transformers' in the core tests) and counts them; unchecking goes back."""
    folder = folders.generation(tmp_path)
    open_with_button(panel, qtbot, folder)
    mask = expected(folder, SAMPLE_MESSAGES).assistant_mask
    assert panel.view.outlined == [] or panel.view.outlined != [i for i, m in enumerate(mask) if m]
    panel.mask_box.setChecked(True)
    assert panel.view.outlined == [i for i, m in enumerate(mask) if m] and sum(mask) > 0
    assert f"assistant mask {sum(mask)} tokens" in panel.status.text()
    i = panel.view.outlined[0]
    assert "assistant mask: 1" in panel.tooltip_for(i) and "assistant mask: 0" in panel.tooltip_for(0)
    panel.mask_box.setChecked(False)
    assert panel.view.outlined != [i for i, m in enumerate(mask) if m]
