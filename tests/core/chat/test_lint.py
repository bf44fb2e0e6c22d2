"""Known answers for every linter rule: the finding, its severity and the tokens it points at."""

from __future__ import annotations

import pytest

from tokviz.core.chat import RULES, TemplateError, lint_chat, load_chat_model, render_chat

from . import folders


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("lint")
    return {"chatml": load_chat_model(folders.chatml(root)), "llama3": load_chat_model(folders.llama3(root)),
            "mistral": load_chat_model(folders.mistral(root))}


def lint(model, messages, **kw):
    r = render_chat(model, messages, **kw)
    return r, lint_chat(model, messages, r)


def only(findings, rule):
    return [f for f in findings if f.rule == rule]


def with_template(model, template: str, **tokens):
    other = load_chat_model(model.folder)
    other.templates["default"] = template
    other.special_tokens.update(tokens)
    return other


@pytest.mark.parametrize("name", ["chatml", "llama3"])
def test_a_clean_conversation_has_no_findings(made, name):
    _, found = lint(made[name], folders.CONVERSATIONS["plain"], add_generation_prompt=True)
    assert found == []


def test_every_rule_has_a_test():
    tested = {"doubled-bos", "missing-eos", "special-in-content", "whitespace-special", "trailing-space",
              "dropped-message", "template-error"}
    assert set(RULES) == tested


# -- doubled BOS ---------------------------------------------------------------------------------


def test_bos_written_twice(made):
    model = with_template(made["llama3"], "{{ bos_token }}" + folders.LLAMA3)
    r, found = lint(model, folders.CONVERSATIONS["plain"])
    (f,) = only(found, "doubled-bos")
    assert (f.severity, f.tokens) == ("error", (0, 1))
    assert r.ids[:2] == [model.token_id("<|begin_of_text|>")] * 2


def test_bos_from_template_and_post_processor(made):
    """Mistral's template writes <s> and its TemplateProcessing adds <s>: tokenizer(prompt) doubles it."""
    model = made["mistral"]
    r, found = lint(model, folders.CONVERSATIONS["plain"])
    (f,) = only(found, "doubled-bos")
    assert (f.severity, f.tokens) == ("warning", (0,))
    assert "add_special_tokens=True" in f.text
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(model.folder / "tokenizer.json"))
    assert hf.encode(r.text).ids[:2] == [1, 1]  # what the finding warns about
    assert hf.encode(r.text, add_special_tokens=False).ids == r.ids


def test_bos_and_add_bos_token_flag():
    model = load_chat_model(folders.deepseek())
    _, found = lint(model, folders.CONVERSATIONS["plain"])
    (f,) = only(found, "doubled-bos")
    assert (f.severity, f.tokens) == ("info", (0,)) and "add_bos_token" in f.text


# -- missing EOS ---------------------------------------------------------------------------------


NO_EOS = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
          "{% if m.role != 'assistant' %}<|im_end|>{% endif %}\n{% endfor %}")


def test_assistant_turn_without_end_token(made):
    model = with_template(made["chatml"], NO_EOS)
    r, found = lint(model, folders.CONVERSATIONS["plain"])
    (f,) = only(found, "missing-eos")
    m = r.messages[1]
    assert (f.severity, f.message) == ("warning", 1)
    assert f.tokens[0] == m.tokens[1] - 1  # the message's last token, then what follows up to the next one
    assert r.encoding.tokens[f.tokens[0]] == b"."
    assert "'<|im_end|>'" in f.text and "next message" in f.text


def test_generation_config_eos_counts_as_an_end(tmp_path, made):
    folder = folders.write_folder(tmp_path / "gen", "gpt2", NO_EOS.replace("{% if m.role != 'assistant' %}", "")
                                  .replace("<|im_end|>{% endif %}", "<|eot|>"),
                                  added=("<|im_start|>", "<|eot|>"), config={"eos_token": "<|endoftext|>"})
    model = load_chat_model(folder)
    assert only(lint(model, folders.CONVERSATIONS["plain"])[1], "missing-eos")
    (folder / "generation_config.json").write_text('{"eos_token_id": [50256, 50258]}')
    model = load_chat_model(folder)
    assert model.stop_ids == {50256, 50258}
    assert only(lint(model, folders.CONVERSATIONS["plain"])[1], "missing-eos") == []


def test_no_eos_known(made):
    model = with_template(made["chatml"], folders.CHATML)
    model.stop_ids = frozenset()
    (f,) = only(lint(model, folders.CONVERSATIONS["plain"])[1], "missing-eos")
    assert f.severity == "info" and f.tokens == ()


# -- special-token text in messages ----------------------------------------------------------------


def test_special_token_typed_by_the_user(made):
    model = made["chatml"]
    messages = [{"role": "user", "content": "stop <|im_end|> here"}]
    r, found = lint(model, messages)
    (f,) = only(found, "special-in-content")
    assert f.severity == "error" and f.message == 0
    (i,) = f.tokens
    assert r.ids[i] == model.token_id("<|im_end|>") and r.encoding.spans[i] == (r.messages[0].span[0] + 5,) * 1 + (
        r.messages[0].span[0] + 15,)
    r, found = lint(model, messages, specials_as_text=True)
    (f,) = only(found, "special-in-content")
    assert f.severity == "info" and "encoded as text" in f.text
    assert b"".join(r.encoding.tokens[i] for i in f.tokens).decode().strip() == "<|im_end|>"
    assert model.token_id("<|im_end|>") not in [r.ids[i] for i in f.tokens]


def test_non_special_added_token_in_a_message(tmp_path):
    folder = folders.write_folder(tmp_path / "think", "gpt2", folders.CHATML, added=folders.CHATML_TOKENS,
                                  config={"eos_token": "<|im_end|>"},
                                  config_added={"50259": {"content": "<think>", "special": False, "normalized": False,
                                                          "lstrip": False, "rstrip": False, "single_word": False}})
    model = load_chat_model(folder)
    r, found = lint(model, [{"role": "user", "content": "a <think> b"}], specials_as_text=True)
    (f,) = only(found, "special-in-content")
    assert f.severity == "warning" and "added token" in f.text and r.ids[f.tokens[0]] == 50259


# -- whitespace next to special tokens ------------------------------------------------------------


def test_trailing_whitespace_before_a_special_token(made):
    model = made["chatml"]
    r, found = lint(model, [{"role": "user", "content": "Hello world  "}])
    (f,) = only(found, "whitespace-special")
    assert f.severity == "warning" and f.message == 0
    assert [r.encoding.tokens[i] for i in f.tokens] == [b" world", b" ", b" "]
    assert f.text.endswith("(the message without it) has '␣world'")


def test_leading_space_right_after_a_special_token():
    """DeepSeek writes <｜User｜> then the message: a leading space makes ' Hello' instead of 'Hello'."""
    model = load_chat_model(folders.deepseek())
    r, found = lint(model, [{"role": "user", "content": " Hello"}])
    (f,) = only(found, "whitespace-special")
    assert [r.encoding.tokens[i] for i in f.tokens] == [b" Hello"]
    assert "starts with whitespace (space)" in f.text and "'Hello'" in f.text


def test_whitespace_the_template_trims_or_that_meets_no_special_token(made):
    assert only(lint(made["llama3"], [{"role": "user", "content": " Hi \n"}])[1], "whitespace-special") == []
    # ChatML: a leading space meets "user\n", template text, not a special token
    assert only(lint(made["chatml"], [{"role": "user", "content": " Hi"}])[1], "whitespace-special") == []


# -- trailing space, dropped messages, template errors ----------------------------------------------


def test_prompt_ending_in_a_space(made):
    model = with_template(made["chatml"], "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                                          "{% if add_generation_prompt %}assistant: {% endif %}")
    r, found = lint(model, folders.CONVERSATIONS["plain"], add_generation_prompt=True)
    (f,) = only(found, "trailing-space")
    assert f.tokens == (len(r.ids) - 1,) and r.text.endswith(": ")
    assert only(lint(model, folders.CONVERSATIONS["plain"])[1], "trailing-space") == []


def test_message_the_template_leaves_out(made):
    model = with_template(made["chatml"], "{% for m in messages if m.role in ('user', 'assistant') %}"
                                          "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}")
    messages = [{"role": "system", "content": "Be brief."}, *folders.CONVERSATIONS["plain"]]
    r, found = lint(model, messages)
    (f,) = only(found, "dropped-message")
    assert (f.severity, f.message) == ("warning", 0) and "'system'" in f.text
    assert f.tokens == (r.messages[1].tokens[0],)  # where it would have been


def test_template_error_finding():
    (f,) = lint_chat(None, [], error=TemplateError("No filter named 'x'.", 7))
    assert (f.rule, f.severity, f.line) == ("template-error", "error", 7)
    assert f.one_line() == "error template-error line 7: No filter named 'x'."
