"""``tokviz train --algorithm parity-aware --parallel FILE [--hybrid M]``: the parallel corpus is split
into documents, the model saves, loads, encodes and exports; the flags belong to parity-aware only."""

from __future__ import annotations

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.core.model_files import load_model
from tokviz.core.parity_bpe import GLOBAL, ParityTimeline

PARALLEL = ("English\n  all people are born free and equal in dignity and rights\n\n"
            "Deutsch\n  alle Menschen sind frei und gleich an Würde und Rechten geboren\n\n"
            "Français\n  tous les êtres humains naissent libres et égaux en dignité et en droits\n")


@pytest.fixture(autouse=True)
def parallel_file(cli, tmp_path):
    (tmp_path / "p.txt").write_text(PARALLEL)


def test_train_parallel_hybrid_encode_export(cli, tmp_path):
    code, out, err = cli("train", "--algorithm", "parity-aware", "--parallel", "p.txt", "--hybrid", "4",
                         "--merges", "40", "--min-count", "1", "-o", "m.json", "--quiet")
    assert (code, out, err) == (0, "", "")
    tl = load_model(tmp_path / "m.json")
    assert isinstance(tl, ParityTimeline) and tl.n_merges == 40
    assert len(tl.documents) == 3 and tl.settings.parallel == "p.txt"
    assert [s.served for s in tl.steps[:4]] == [GLOBAL] * 4 and all(s.served >= 0 for s in tl.steps[4:])
    text = "alle Menschen sind frei"
    code, ids, err = cli("encode", "m.json", text, "--ids")
    assert code == 0 and [int(i) for i in ids.split()] == tl.tokenizer().encode(text).ids
    code, out, err = cli("export", "m.json", "-o", "t.json")
    assert code == 0 and (tmp_path / "t.json").exists()
    code, out, err = cli("merges", "m.json", "--json")
    assert code == 0 and len(out.splitlines()) == 40


def test_the_corpus_file_as_a_plain_argument(cli, tmp_path):
    code, _out, err = cli("train", "p.txt", "--algorithm", "parity-aware", "--merges", "10", "-o", "m.json", "--quiet")
    assert code == 0, err
    assert load_model(tmp_path / "m.json").documents == ("English", "Deutsch", "Français")


@pytest.mark.parametrize("args, message", [
    (["p.txt", "--hybrid", "3"], "--hybrid applies to parity-aware only"),
    (["--algorithm", "parity-aware", "--parallel", "p.txt", "p.txt"], "--parallel FILE is the corpus"),
    (["--algorithm", "parity-aware", "--parallel", "missing.txt"], "missing.txt"),
    (["--algorithm", "parity-aware", "--parallel", "p.txt", "--hybrid", "x"], "expected a whole number"),
])
def test_bad_flags(cli, args, message):
    code, _out, err = cli("train", "-o", "m.json", "--quiet", *args)
    assert code != 0 and message in usage_and_error(err)[1]
