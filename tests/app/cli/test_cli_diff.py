"""``tokviz diff A B``: the report, ``--json``'s keys, ``MODEL@K``, and exit status 0 (no
difference), 1 (a difference), 2 (an error, in one line)."""

from __future__ import annotations

import json

import pytest

from tests.app.cli.usage import usage_and_error
from tests.conftest import shared_file
from tokviz.core import TrainSettings, train
from tokviz.core.model_files import save_model

CORPUS = "the lowest newest widest lower newer wider the low new wide\n" * 10
KEYS = {"input", "ids_a", "ids_b", "stage", "checked"}


@pytest.fixture(autouse=True)
def files(cli, tmp_path):
    save_model(train(TrainSettings(merges=20, min_count=1), texts=[CORPUS]), tmp_path / "m.json")
    (tmp_path / "lines.txt").write_text("no merge here: xyz\nthe lowest\n", encoding="utf-8")
    (tmp_path / "bin.dat").write_bytes(b"\x7fELF\x00\x01\x02")


def test_one_model_at_two_steps_differs_in_the_model(cli):
    code, out, err = cli("diff", "m.json@2", "m.json@15", "-f", "lines.txt", "--json")
    assert (code, err) == (1, "")
    row = json.loads(out)
    assert KEYS <= set(row) and row["stage"] == "model" and row["origin"] == "line 2"
    assert row["checked"] == 2 and row["original"] == "the lowest" and row["input"] in row["original"]
    assert row["ids_a"] != row["ids_b"] and len(row["ids_a"]) > len(row["ids_b"])
    assert row["why"]["a"]["ids"] == [str(i) for i in row["ids_a"]]


def test_no_difference_exits_0_with_input_null(cli):
    code, out, err = cli("diff", "m.json@20", "m.json", "-f", "lines.txt", "--fuzz", "30", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"input": None, "ids_a": None, "ids_b": None, "stage": None, "checked": 32}


def test_without_a_file_it_generates_texts(cli):
    code, out, _ = cli("diff", "m.json", "m.json", "--fuzz", "20", "--seed", "3")
    assert code == 0 and out == "no difference: m.json and m.json agree on all 20 texts checked\n"


def test_the_report_names_the_stage_and_shows_both_traces(cli):
    code, out, _ = cli("diff", "m.json@0", "m.json", "-f", "lines.txt")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "first difference after 2 texts, at line 2"
    assert lines[2].startswith("A m.json@0: ") and lines[3].startswith("B m.json: ")
    assert lines[4].startswith("first stage that differs: model: ")
    assert "why A (m.json@0):" in lines and "why B (m.json):" in lines


def test_mistral_files_differ_by_bos_unless_ignored(cli):
    folder = shared_file("vocab", "hf", "mistral-7b-v0.1")
    a, b = str(folder / "tokenizer.json"), str(folder / "tokenizer.model")
    code, out, _ = cli("diff", a, b, "--fuzz", "5", "--json")
    assert code == 1 and json.loads(out)["stage"] == "bos_eos" and json.loads(out)["input"] == ""
    code, out, _ = cli("diff", a, b, "--fuzz", "200", "--ignore", "bos_eos", "--specials-as-text", "--json")
    assert code == 0 and json.loads(out)["checked"] == 200


@pytest.mark.parametrize("argv, needle", [
    (("m.json", "nope.json"), "nope.json"),
    (("m.json", "m.json", "-f", "missing.txt"), "missing.txt"),
    (("m.json", "m.json", "-f", "bin.dat"), "bin.dat"),
    (("m.json@99", "m.json"), "step 99 is past the last merge (20)"),
    (("m.json", "m.json", "--ignore", "normalizer"), "invalid choice"),
    (("m.json",), "required"),
])
def test_errors_exit_2_in_one_line(cli, argv, needle):
    code, out, err = cli("diff", *argv)
    _usage, line = usage_and_error(err)
    assert (code, out) == (2, "") and needle in line
