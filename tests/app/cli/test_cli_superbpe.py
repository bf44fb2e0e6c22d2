"""``tokviz train --algorithm superbpe --transition T``: the model saves, loads, encodes and decodes;
export is refused with the reason; the flag belongs to SuperBPE only."""

from __future__ import annotations

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.core.model_files import load_model
from tokviz.core.superbpe.timeline import SuperBpeTimeline, is_superword

CORPUS = "of the people, by the people, for the people!! " * 20 + "and the rest of the people.\n" * 10


@pytest.fixture(autouse=True)
def corpus_file(cli, tmp_path):
    (tmp_path / "c.txt").write_text(CORPUS)


def test_train_encode_decode_round_trip(cli, tmp_path):
    code, out, err = cli("train", "c.txt", "-o", "m.json", "--algorithm", "superbpe", "--transition", "12",
                         "--merges", "30", "--quiet")
    assert (code, out, err) == (0, "", "")
    tl = load_model(tmp_path / "m.json")
    assert isinstance(tl, SuperBpeTimeline) and (tl.transition, tl.n_merges) == (12, 30)
    assert any(is_superword(s.token) for s in tl.steps[12:])
    text = "for the people, of the people"
    code, ids, err = cli("encode", "m.json", text, "--ids")
    assert code == 0 and err == ""
    ids = [int(i) for i in ids.split()]
    assert ids == tl.tokenizer().encode(text).ids and len(ids) < len(text) // 3
    code, out, err = cli("decode", "m.json", *map(str, ids))
    assert code == 0 and out.rstrip("\n") == text
    code, out, err = cli("merges", "m.json", "--json")
    assert code == 0 and len(out.splitlines()) == 30


def test_export_is_refused_with_the_reason(cli, tmp_path):
    cli("train", "c.txt", "-o", "m.json", "--algorithm", "superbpe", "--transition", "5", "--merges", "10", "--quiet")
    code, _out, err = cli("export", "m.json", "-o", "t.json")
    assert code != 0 and not (tmp_path / "t.json").exists()
    assert "SuperBPE models are not exported" in usage_and_error(err)[1]


@pytest.mark.parametrize("args, message", [
    (["--transition", "5"], "--transition applies to superbpe only"),
    (["--algorithm", "superbpe", "--transition", "50", "--merges", "10"], "at most 10"),
    (["--algorithm", "superbpe", "--split", "whitespace"], "keeps every character"),
    (["--algorithm", "superbpe", "--transition", "x"], "expected a whole number"),
])
def test_bad_flags(cli, args, message):
    code, _out, err = cli("train", "c.txt", "-o", "m.json", "--quiet", *args)
    assert code != 0 and message in usage_and_error(err)[1]
