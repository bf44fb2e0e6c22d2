"""`find_difference` on known differing pairs built offline: GPT-2 against itself with one
pipeline setting changed, Mistral's tokenizer.json against its tokenizer.model, a trained BPE at
two steps; the first stage named, the input shrunk to a 1-minimal one."""

from __future__ import annotations

import pytest

from tests.core.parity.conftest import edited_gpt2
from tokviz.core.errors import Cancelled, TokvizError
from tokviz.core.parity import Side, as_json, explain, find_difference, report_lines

LINES = ["Hello world, this is a test line.", "second line: 12345 apples!"]


def assert_one_minimal(a: Side, b: Side, text: str, **kw) -> None:
    """Removing any one character makes the two agree."""
    assert explain(a, b, text, **kw) is not None
    for i in range(len(text)):
        assert explain(a, b, text[:i] + text[i + 1:], **kw) is None, (text, i)


def flip_prefix_space(config: dict) -> None:
    config["pre_tokenizer"]["add_prefix_space"] = not config["pre_tokenizer"]["add_prefix_space"]


def test_gpt2_against_its_add_prefix_space_flipped(gpt2, tmp_path):
    flipped = edited_gpt2(tmp_path, flip_prefix_space, "flipped")
    result = find_difference(gpt2, flipped, lines=LINES)
    d = result.difference
    assert result.checked == 1 and d.origin == "line 1" and d.original == LINES[0]
    assert d.stage == "pre_tokenizer"
    assert len(d.text) == 1 and d.text in LINES[0] and not d.text.isspace()
    assert d.ids_a == tuple(gpt2.outcome(d.text).ids) and d.ids_b == tuple(flipped.outcome(d.text).ids)
    assert d.ids_a != d.ids_b
    assert d.traces[1].stages["pieces"][0].startswith("␣") and not d.traces[0].stages["pieces"][0].startswith("␣")
    assert_one_minimal(gpt2, flipped, d.text)


def test_a_normalizer_is_named_first(gpt2, tmp_path):
    lowered = edited_gpt2(tmp_path, lambda c: c.update(normalizer={"type": "Lowercase"}), "lower")
    d = find_difference(gpt2, lowered, lines=["all lower case", "Then One Capital"]).difference
    assert (d.origin, d.stage) == ("line 2", "normalizer")
    assert d.text.isupper() and len(d.text) == 1
    assert_one_minimal(gpt2, lowered, d.text)


def test_same_ids_different_decoder(gpt2, tmp_path):
    no_decoder = edited_gpt2(tmp_path, lambda c: c.update(decoder=None), "raw")
    d = find_difference(gpt2, no_decoder, lines=["a", "ab cd"]).difference
    assert d.stage == "decoder" and d.ids_a == d.ids_b
    assert find_difference(gpt2, no_decoder, lines=["a", "ab cd"], fuzz=50, ignore=["decoder"]).difference is None


def test_identical_tokenizers_agree_on_every_kind_of_text(gpt2):
    result = find_difference(gpt2, Side("again", gpt2.timeline), lines=LINES, fuzz=140, seed=7)
    assert result.difference is None and result.checked == len(LINES) + 140
    assert as_json(result) == {"input": None, "ids_a": None, "ids_b": None, "stage": None, "checked": 142}
    assert "agree on all 142 texts" in report_lines(result)[0]


def test_mistral_json_and_model_differ_by_bos_and_special_token_text(mistral):
    """They do differ: tokenizer.json's post-processor adds <s>, and it reads "<s>" in the text
    as the special token where sentencepiece reads text; nothing else on the generated texts."""
    as_json_file, as_model = mistral
    d = find_difference(as_json_file, as_model, lines=LINES).difference
    assert (d.text, d.stage, d.ids_a, d.ids_b) == ("", "bos_eos", (1,), ())
    d = find_difference(as_json_file, as_model, lines=LINES, fuzz=400, ignore=["bos_eos"]).difference
    assert d.stage == "special_tokens" and d.text in ("<s>", "</s>", "<unk>")
    assert d.origin.endswith("(special)") and d.ids_a[0] in (0, 1, 2)
    assert_one_minimal(as_json_file, as_model, d.text, ignore=["bos_eos"])
    plain = [Side(s.label, s.timeline, specials_as_text=True) for s in mistral]
    result = find_difference(*plain, lines=LINES, fuzz=400, ignore=["bos_eos"])
    assert result.difference is None and result.checked == 402


def test_a_trained_bpe_at_two_steps(trained):
    early, late = Side("early", trained, step=5), Side("late", trained, step=30)
    d = find_difference(early, late, lines=["the lowest newest"]).difference
    assert d.stage == "model" and len(d.ids_a) > len(d.ids_b)
    assert d.traces[0].step == 5 and d.traces[1].step == 30
    assert_one_minimal(early, late, d.text)
    assert find_difference(late, Side("same", trained, step=30), lines=["the lowest newest"], fuzz=70).difference is None


def test_progress_and_stopping(gpt2):
    seen = []
    result = find_difference(gpt2, Side("again", gpt2.timeline), fuzz=40, progress=lambda w, f: seen.append(f))
    assert result.checked == 40 and seen and seen == sorted(seen) and seen[-1] < 1
    with pytest.raises(Cancelled):
        find_difference(gpt2, gpt2, fuzz=40, should_stop=lambda: True)


def test_only_output_stages_may_be_ignored(gpt2):
    with pytest.raises(TokvizError, match="cannot ignore normalizer"):
        find_difference(gpt2, gpt2, fuzz=1, ignore=["normalizer"])
