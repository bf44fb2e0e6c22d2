"""tokenizer.json's `Replace` normalizer against `tokenizers`: the text, the ids and every span,
including matches of several characters (their new characters aligned with the match's last
one), replacements by nothing or by more characters, and patterns that match empty text (no
empty match where the previous match ended; empty text left alone)."""

from __future__ import annotations

import random

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tokviz.core.formats.tokenizer_json.normalizers import NormStr, build_normalizer  # noqa: E402
from tokviz.core.loading import load_tokenizer  # noqa: E402

CASES = [(("String", ""), "_"), (("Regex", "x*"), "_"), (("Regex", "b*"), "QQ"), (("Regex", ""), "_"),
         (("Regex", "a|"), "_"), (("Regex", r"\s*"), "_"), (("String", "ab"), "_"), (("Regex", "(?=a)"), "_"),
         (("Regex", "x+"), "Q_Q"), (("String", "xx"), ""), (("Regex", "a(?=b)|b"), "__"), (("String", "x"), "__")]


@pytest.mark.parametrize(("pattern", "content"), CASES)
def test_replace_equals_tokenizers(tmp_path, pattern, content):
    from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    vocab = {c: i for i, c in enumerate(["[UNK]", "_", "a", "b", "x", "é", " ", "Q"])}
    ref = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    kind, text = pattern
    ref.normalizer = normalizers.Replace(text if kind == "String" else Regex(text), content)
    ref.pre_tokenizer = pre_tokenizers.Split(Regex("."), "isolated")  # one token per character
    ref.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path / "tokenizer.json")
    norm = build_normalizer({"type": "Replace", "pattern": {kind: text}, "content": content})
    rng = random.Random(7)
    samples = ["", "ab", "xx", "axxb"] + ["".join(rng.choice("abx é") for _ in range(rng.randrange(9))) for _ in range(300)]
    for s in samples:
        want = ref.encode(s)
        got = ours.encode(s)
        assert (got.ids, [tuple(x) for x in got.spans]) == (want.ids, [tuple(x) for x in want.offsets]), s
        assert ours.encode_ids(s) == want.ids, s
        expected = ref.normalizer.normalize_str(s)
        assert norm.text(s) == expected == norm(NormStr.of(s)).text, s
