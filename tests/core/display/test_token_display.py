"""Token display (labels, escaping, byte groups, round trip) and diagnostics/export (Qt-free)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core import TrainSettings, train
from tokviz.core.baselines import CharTokenizer, WordTokenizer
from tokviz.core.display.diagnostics import (
    digit_runs,
    export_html,
    export_json,
    ids_text,
    leading_space_twins,
    script_counts,
    script_of,
    trailing_whitespace,
    unseen_tokens,
)
from tokviz.core.display.palette import token_palette
from tokviz.core.display.tokens import (
    BYTES,
    SPECIAL,
    TEXT,
    UNKNOWN,
    byte_groups,
    escape_text,
    round_trip,
    token_label,
    token_labels,
    token_stats,
)


@pytest.fixture(scope="module")
def byte_tok():
    tl = train(TrainSettings(vocab_size=280, special_tokens=("<|eot|>",)), texts=["hello world hello there " * 20])
    return tl.tokenizer()


def test_escape_invisible_always_and_whitespace_on_request():
    assert escape_text("a\u200db\ufeffc\xa0d") == "a⟨ZWJ⟩b⟨BOM⟩c⍽d"
    assert escape_text("a b\tc\r\n") == "a b    c"
    assert escape_text("a b\tc\r\n", show_whitespace=True) == "a␣b⇥c␍↵"
    assert escape_text("\x01\x7f") == "\\x01\\x7F"
    assert "\ufffd" not in escape_text("\ufffd")


def test_token_label_partial_bytes_never_replacement_char():
    assert token_label("é".encode()[:1]) == ("<C3>", True)
    assert token_label(" 東".encode()[:3]) == (" <E6><9D>", True)
    assert token_label(b" hi", show_whitespace=True) == ("␣hi", False)
    label, partial = token_label("👋".encode()[1:3])
    assert label == "<9F><91>" and partial and "\ufffd" not in label


def test_emoji_and_cjk_become_grouped_byte_tokens(byte_tok):
    text = "hi 東京 👋🏽"
    enc = byte_tok.encode(text)
    lab = token_labels(text, enc)
    assert all("\ufffd" not in s for s in lab.labels)
    byte_labels = [s for s, k in zip(lab.labels, lab.kinds) if k == BYTES]
    assert byte_labels[:3] == ["<E6>", "<9D>", "<B1>"]  # 東 = E6 9D B1
    groups = byte_groups(enc, lab.kinds)
    chars = [text[enc.spans[a][0]:enc.spans[b][1]] for a, b in groups]
    assert chars == ["東", "京", "👋", "🏽"]
    assert [b - a + 1 for a, b in groups] == [3, 3, 4, 4]


def test_special_and_unknown_kinds():
    tl = train(TrainSettings(units="chars", special_tokens=("<s>",), merges=2), texts=["the cat sat on the mat"])
    tok = tl.tokenizer()
    text = "<s>the bird"
    enc = tok.encode(text, allowed_special="all")
    lab = token_labels(text, enc)
    assert lab.kinds[0] == SPECIAL and lab.labels[0] == "<s>"
    unknown = [lab.labels[i] for i, k in enumerate(lab.kinds) if k == UNKNOWN]
    assert unknown == ["b", "i", "r", "d"]
    assert TEXT in lab.kinds


def test_round_trip_classic_lossy_example():
    corpus = "the cat sat on the mat"
    tok = CharTokenizer.from_texts([corpus])
    text = "the bird flew over the garden"
    enc = tok.encode(text)
    rt = round_trip(text, enc, tok.decode(enc.ids))
    assert not rt.ok
    lost = [text[a:b] for a, b in rt.lossy]
    assert "w" in lost and "v" in lost
    assert sorted(set(lost)) == sorted(set("birdflwvgr") - set(corpus))
    assert rt.first_difference == 4  # "b" of bird
    assert "lossy" in rt.summary()
    ok = round_trip("the cat", tok.encode("the cat"), tok.decode(tok.encode("the cat").ids))
    assert ok.ok and ok.lossy == []


def test_round_trip_whitespace_change_is_explained():
    tok = WordTokenizer.from_texts(["a b c"])
    text = "a  b\nc"
    enc = tok.encode(text)
    rt = round_trip(text, enc, tok.decode(enc.ids))
    assert not rt.ok and rt.lossy == [(1, 3), (4, 5)] and rt.note == "dropped: '\\n', '  '"
    rt2 = round_trip("a b", tok.encode("a b"), "a b ")
    assert not rt2.ok and rt2.first_difference == 3


def test_stats_and_differences(byte_tok):
    text = "héllo"
    enc = byte_tok.encode(text)
    st = token_stats(text, enc)
    assert (st.tokens, st.chars, st.bytes) == (len(enc.ids), 5, 6)
    assert st.bytes_per_token == pytest.approx(6 / len(enc.ids))
    assert "tokens" in st.summary()


def test_diagnostics(byte_tok):
    text = "hello  hello world 2024 12345\nend \n"
    enc = byte_tok.encode(text)
    vocab = {byte_tok.token_bytes(i): i for i in range(byte_tok.n_vocab)}
    twins = leading_space_twins(text, vocab.get)
    assert [t.word for t in twins] == ["hello"]
    assert twins[0].bare_id == vocab[b"hello"] and twins[0].spaced_id == vocab[b" hello"]
    runs = digit_runs(text, enc)
    assert [r.digits for r in runs] == ["2024", "12345"]
    assert "".join(runs[0].pieces) == "2024"
    assert trailing_whitespace(text) == [2]
    assert trailing_whitespace("a \nb\t") == [1, 2]
    assert script_of("é") == "Latin" and script_of("東") == "Han" and script_of("Я") == "Cyrillic"
    rows = {s.script: s for s in script_counts("ab 東", byte_tok.encode("ab 東"))}
    assert rows["Han"].chars == 1 and rows["Han"].tokens == 3 and rows["Han"].tokens_per_char == 3
    counts = {i: 0 for i in range(256)}
    counts[ord("h")] = 5
    unseen = unseen_tokens(byte_tok.encode("hq"), counts)
    assert [tid for _, tid in unseen] == [ord("q")]


def test_export_json_and_html(byte_tok):
    text = "hello 東 <b>"
    enc = byte_tok.encode(text)
    data = export_json(text, enc, name="trained", step=3)
    assert data["ids"] == enc.ids and data["spans"] == [list(s) for s in enc.spans]
    assert data["tokens"][:2] == ["hello", "␣"] and data["tokens"][2] == "<E6>"
    assert data["tokens_hex"][0] == enc.tokens[0].hex()
    assert json.loads(json.dumps(data))["stats"]["characters"] == len(text)
    page = export_html(text, enc, token_palette("high-contrast"), title="T", show_ids=True)
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    assert page.count('<span class="t') == len(enc.ids)
    assert "<b>" not in page and "&lt;<span class=\"id\">60</span>" in page
    assert "&lt;E6&gt;" in page  # byte tokens as <E6>, escaped
    assert ids_text([1, 2, 3]) == "[1, 2, 3]"


def _digit_runs_slow(text, enc):
    """The obvious version: every token boundary, sorted, cut into each run of digits."""
    import re

    bounds = sorted({b for _, b in enc.spans} | {a for a, _ in enc.spans})
    out = []
    for m in re.finditer(r"\d+", text):
        a, b = m.span()
        cuts = [a, *(x for x in bounds if a < x < b), b]
        out.append((a, m.group(), tuple(text[x:y] for x, y in zip(cuts, cuts[1:]))))
    return out[:50]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab 1234567890\t\n٣٤", max_size=80))
def test_digit_runs_and_trailing_whitespace_equal_the_obvious_versions(text):
    import re

    tok = _DIGIT_TOKENIZER.tokenizer()
    enc = tok.encode(text)
    assert [(r.start, r.digits, r.pieces) for r in digit_runs(text, enc)] == _digit_runs_slow(text, enc)
    slow = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r"[ \t]+(?=\r?\n|\Z)", text)]
    assert trailing_whitespace(text) == slow


_DIGIT_TOKENIZER = train(  # digits merged into pairs and triples: runs are cut inside
TrainSettings(vocab_size=300), texts=["1234 5678 12 345 6789 101 2024 " * 20])
