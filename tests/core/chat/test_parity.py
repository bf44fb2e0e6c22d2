"""The prompt text and ids equal Hugging Face transformers' ``apply_chat_template`` exactly.

Reference: ``AutoTokenizer.from_pretrained(folder).apply_chat_template(messages,
add_generation_prompt=..., tokenize=...)`` (transformers 5, tokenizers-only, offline on a local
folder). Folders: the shared DeepSeek V3 one and ChatML / Llama 3 / Gemma / Mistral / multi-line
templates written in `folders`, over conversations with emoji, CRLF, tabs, double spaces, edge
whitespace and special-token strings typed by the user. Skipped (with the reason) when transformers
is not installed.
"""

from __future__ import annotations

import os

import pytest

from tokviz.core.chat import TemplateError, load_chat_model, render_chat, render_text

from . import folders

FOLDERS = {"chatml": folders.chatml, "llama3": folders.llama3, "gemma": folders.gemma, "mistral": folders.mistral,
           "pretty": folders.pretty, "deepseek": lambda tmp: folders.deepseek()}


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    made: dict[str, object] = {}

    def get(name: str):
        if name not in made:
            made[name] = FOLDERS[name](tmp_path_factory.mktemp(name))
        return made[name]

    return get


@pytest.fixture(scope="module")
def pair(model_folder, transformers):
    """(tokviz's ChatModel, transformers' tokenizer) of a folder, loaded once per module."""
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            folder = model_folder(name)
            cache[name] = (load_chat_model(folder), transformers.AutoTokenizer.from_pretrained(os.fspath(folder)))
        return cache[name]

    return get


def reference(ref, messages, add_generation_prompt):
    """(text, ids) from transformers, or the exception it raised."""
    try:
        text = ref.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, tokenize=False)
        ids = ref.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, tokenize=True,
                                      return_dict=False)
    except Exception as exc:  # noqa: BLE001 - compared with ours below
        return exc
    return text, list(ids)


@pytest.mark.parametrize("add_generation_prompt", [False, True])
@pytest.mark.parametrize("conversation", sorted(folders.CONVERSATIONS))
@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_text_and_ids_equal_apply_chat_template(pair, name, conversation, add_generation_prompt):
    model, ref = pair(name)
    messages = folders.CONVERSATIONS[conversation]
    expected = reference(ref, messages, add_generation_prompt)
    if isinstance(expected, Exception):  # Gemma refuses a system role, Mistral alternation: same error
        with pytest.raises(TemplateError) as err:
            render_chat(model, messages, add_generation_prompt=add_generation_prompt)
        assert err.value.reason == str(expected.message if hasattr(expected, "message") else expected)
        return
    text, ids = expected
    got = render_chat(model, messages, add_generation_prompt=add_generation_prompt)
    assert got.text == text
    assert got.ids == ids
    assert render_text(model, messages, add_generation_prompt=add_generation_prompt) == text


def test_some_conversations_do_fail_in_both(pair):
    """The error branch above is exercised: Gemma refuses the system role in both."""
    model, ref = pair("gemma")
    expected = reference(ref, folders.CONVERSATIONS["system"], False)
    assert isinstance(expected, Exception) and "System role not supported" in str(expected)
    with pytest.raises(TemplateError, match="System role not supported"):
        render_chat(model, folders.CONVERSATIONS["system"])


def test_template_variables_match(pair):
    """The named special tokens reach the template as transformers passes them (AddedToken
    objects by their content; pad and eos in DeepSeek's config)."""
    model, ref = pair("deepseek")
    assert model.special_tokens == ref.special_tokens_map
    model, ref = pair("gemma")
    assert model.bos_token == ref.bos_token == "<bos>"


def test_config_only_tokens_are_added_like_transformers(tmp_path, transformers):
    """A token named only in tokenizer_config.json (added_tokens_decoder, or as eos_token) is
    added to the tokenizer with the id transformers gives it."""
    folder = folders.write_folder(
        tmp_path / "extra", "gpt2", "{% for m in messages %}<|turn|>{{ m.content }}{{ eos_token }}{% endfor %}",
        config={"eos_token": "<|stop|>"},
        config_added={"50257": {"content": "<|turn|>", "lstrip": False, "rstrip": False, "normalized": False,
                                "single_word": False, "special": True}})
    messages = [{"role": "user", "content": "a <|turn|> b <|stop|>"}]
    ref = transformers.AutoTokenizer.from_pretrained(os.fspath(folder))
    got = render_chat(load_chat_model(folder), messages)
    assert got.ids == reference(ref, messages, False)[1]
    assert {got.ids[0], got.ids[-1]} == {ref.convert_tokens_to_ids("<|turn|>"), ref.convert_tokens_to_ids("<|stop|>")}


def test_specials_as_text_encodes_only_message_text_as_text(pair):
    """With specials as text, the user's ``<|im_end|>`` is text and the template's stay tokens:
    every piece between the template's tokens equals tokenizers' encoding with special tokens
    split (``encode_special_tokens``)."""
    tokenizers = pytest.importorskip("tokenizers")
    model, _ = pair("chatml")
    messages = [{"role": "user", "content": "a<|im_end|>b <|im_start|> c"}]
    got = render_chat(model, messages, specials_as_text=True)
    hf = tokenizers.Tokenizer.from_file(os.fspath(model.folder / "tokenizer.json"))
    hf.encode_special_tokens = True
    start, end = hf.token_to_id("<|im_start|>"), hf.token_to_id("<|im_end|>")
    piece = lambda s: hf.encode(s, add_special_tokens=False).ids
    expected = ([start] + piece("system\nYou are a helpful assistant.") + [end] + piece("\n") + [start]
                + piece("user\na<|im_end|>b <|im_start|> c") + [end] + piece("\n"))
    assert got.ids == expected
    plain = render_chat(model, messages)
    assert plain.ids.count(end) == got.ids.count(end) + 1 and plain.ids.count(start) == got.ids.count(start) + 1


PIECES = ["<|im_end|>", "<|im_start|>", "<s>", "</s>", "<|eot_id|>", "<bos>", " ", "  ", "\t", "\r\n", "\n", "\u200d",
          "👋🏽", "東京", "é", "word", " word", "123", "'s", "▁", "{{ x }}", "{%", "\\n"]


@pytest.mark.parametrize("name", ["chatml", "llama3", "mistral"])
def test_random_messages_match(pair, name):
    """Hypothesis: random contents built from special-token strings, whitespace, emoji, CJK and
    template-looking text give transformers' text and ids."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    model, ref = pair(name)
    content = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=8).map("".join)
    turn = st.tuples(content, content).map(lambda t: [{"role": "user", "content": t[0]},
                                                        {"role": "assistant", "content": t[1]}])

    @hypothesis.settings(max_examples=40, deadline=None, derandomize=True,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(st.lists(turn, min_size=1, max_size=3).map(lambda ts: [m for t in ts for m in t]),
                      st.booleans())
    def check(messages, add_generation_prompt):
        expected = reference(ref, messages, add_generation_prompt)
        hypothesis.assume(not isinstance(expected, Exception))
        got = render_chat(model, messages, add_generation_prompt=add_generation_prompt)
        assert (got.text, got.ids) == expected

    check()
