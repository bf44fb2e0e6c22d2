"""The trainer's split uses Unicode 16 like tiktoken and tokenizers (not the `regex` module's 17):
a model trained here on text with the newest letters, exported to .tiktoken and tokenizer.json,
gives the same ids in those libraries on every one of those letters."""

from __future__ import annotations

import random

import pytest

from tests.real_tokenizers import corpus
from tokviz.core import TrainSettings, train
from tokviz.core.saved.tokenizer_export import export_tiktoken, export_tokenizer_json
from tokviz.core.text.split import parse_split
from tokviz.core.text.unicode_tables import NEW_IN_UNICODE_17

NEW = [chr(c) for a, b in zip(NEW_IN_UNICODE_17.starts, NEW_IN_UNICODE_17.ends) for c in range(a, b + 1)]


def _words(chars: list[str], rng: random.Random) -> list[str]:
    """Words mixing the new letters with ASCII letters, digits, spaces and marks."""
    out = []
    for i in range(0, len(chars), 4):
        group = "".join(chars[i : i + 4])
        form = rng.choice(["ab{}cd", " {}", "{}x", "{}'s", "1{}2", "{} {}", "é{}\u0301", "\n{}"])
        out.append(form.format(group, group))
    return out


def test_no_new_character_joins_a_word():
    """Unknown to Unicode 16, a new letter, digit or mark never continues the word before it."""
    split = parse_split("gpt4")
    assert len(NEW) > 17_000
    assert [c for c in NEW if split.chunks(f"ab{c}")[0] != "ab"] == []


@pytest.mark.parametrize("split", ["gpt4", "o200k", "gpt2"])
def test_exports_agree_on_the_newest_letters(tmp_path, split):
    tiktoken = pytest.importorskip("tiktoken")
    tokenizers = pytest.importorskip("tokenizers")
    rng = random.Random(17)
    words = _words(NEW, rng)
    text = corpus("taylorswift.txt", 20_000) + "".join(rng.sample(words, len(words)) * 3)
    timeline = train(TrainSettings(units="bytes", split=split, merges=400), texts=[text])
    ours = timeline.tokenizer()
    exp = export_tiktoken(timeline, tmp_path / "m.tiktoken")
    enc = tiktoken.Encoding("m", pat_str=exp.pattern, mergeable_ranks=exp.ranks, special_tokens=exp.special_tokens)
    export_tokenizer_json(timeline, tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    bad = []
    for w in words:
        ids = ours.encode_ordinary(w).ids
        if enc.encode_ordinary(w) != ids or hf.encode(w).ids != ids:
            bad.append(w)
    assert bad == [], f"{len(bad)} of {len(words)} differ, first {bad[0]!r}"
