"""``tokviz train --algorithm boundless``: the model saves, loads, encodes and decodes; ``merges
--json`` gives each step's kind; export is refused with the reason; the flags are BoundlessBPE's."""

from __future__ import annotations

import json

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.core.boundless.timeline import BoundlessTimeline
from tokviz.core.model_files import load_model

CORPUS = "of the people, by the people, for the people!! " * 20 + "and the rest of the people.\n" * 10


@pytest.fixture(autouse=True)
def corpus_file(cli, tmp_path):
    (tmp_path / "c.txt").write_text(CORPUS)


def test_train_encode_decode_and_kinds(cli, tmp_path):
    code, out, err = cli("train", "c.txt", "-o", "m.json", "--algorithm", "boundless", "--merges", "25", "--quiet")
    assert (code, out, err) == (0, "", "")
    tl = load_model(tmp_path / "m.json")
    assert isinstance(tl, BoundlessTimeline) and tl.n_merges == 25 and tl.n_supermerges > 0
    text = "for the people, of the people"
    code, ids, err = cli("encode", "m.json", text, "--ids")
    assert code == 0 and err == ""
    ids = [int(i) for i in ids.split()]
    assert ids == tl.tokenizer().encode(text).ids and any(tl.tokenizer().is_superword(i) for i in ids)
    code, out, err = cli("decode", "m.json", *map(str, ids))
    assert code == 0 and out.rstrip("\n") == text
    code, out, err = cli("merges", "m.json", "--json")
    kinds = [json.loads(line)["kind"] for line in out.splitlines()]
    assert code == 0 and kinds == tl.kinds() and "supermerge" in kinds
    code, out, err = cli("merges", "m.json")
    assert out.splitlines()[0].endswith("\tkind") and any(line.endswith("\tsupermerge") for line in out.splitlines())


def test_supermerges_off_trains_plain_bpe_merges(cli, tmp_path):
    cli("train", "c.txt", "-o", "b.json", "--merges", "30", "--quiet")
    cli("train", "c.txt", "-o", "o.json", "--algorithm", "boundless", "--supermerges", "off", "--merges", "30", "--quiet")
    assert load_model(tmp_path / "o.json").merges() == load_model(tmp_path / "b.json").merges()


def test_export_is_refused_with_the_reason(cli, tmp_path):
    cli("train", "c.txt", "-o", "m.json", "--algorithm", "boundless", "--merges", "10", "--quiet")
    code, _out, err = cli("export", "m.json", "-o", "t.json")
    assert code != 0 and not (tmp_path / "t.json").exists()
    assert "BoundlessBPE models are not exported" in usage_and_error(err)[1]


@pytest.mark.parametrize("args, message", [
    (["--supermerges", "off"], "--supermerges applies to boundless only"),
    (["--algorithm", "boundless", "--superwords", "digits"], "invalid choice"),
])
def test_bad_flags_are_one_line_errors(cli, args, message):
    code, _out, err = cli("train", "c.txt", "-o", "m.json", *args, "--quiet")
    assert code != 0 and message in usage_and_error(err)[1]
