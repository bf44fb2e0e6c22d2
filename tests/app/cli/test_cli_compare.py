"""``tokviz compare``: table, JSON and CSV output, documents, steps, and its error paths."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.core import TrainSettings, train
from tokviz.core.compare import METRIC_KEYS
from tokviz.core.model_files import save_model

CORPUS = "ab ab abc ba\n"
UDHR_LIKE = "Titre\n    ab ab\n  \nTitle\n    abab ab ab\n  \nOther\n    ba\n"


@pytest.fixture(autouse=True)
def files(cli, tmp_path):
    """Two character models (0 and 2 merges) and texts in the folder the `cli` fixture runs in."""
    for name, merges in (("m0.json", 0), ("m2.json", 2)):
        save_model(train(TrainSettings(units="chars", split="whitespace", merges=merges, min_count=1),
                         texts=[CORPUS]), tmp_path / name)
    (tmp_path / "t.txt").write_text("ab ab\n", encoding="utf-8")
    (tmp_path / "u.txt").write_text(UDHR_LIKE, encoding="utf-8")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "bin.dat").write_bytes(b"\x7fELF\x00\x01\x02")
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_json_has_exactly_the_metric_keys_in_argument_order(cli):
    code, out, err = cli("compare", "m2.json", "m0.json", "-f", "t.txt", "--json")
    assert (code, err) == (0, "")
    rows = json_lines(out)
    assert [r["model"] for r in rows] == ["m2.json", "m0.json"]
    assert all(list(r) == ["model", *METRIC_KEYS, "renyi_alpha", "numbers_by_length"] for r in rows)
    # "ab ab\n" in characters: a b a b (4 tokens), or with the merge a+b: ab ab (2 tokens)
    assert [(r["tokens"], r["words"], r["fertility"], r["continued_words"]) for r in rows] == [
        (2, 2, 1.0, 0.0), (4, 2, 2.0, 1.0)]
    assert rows[0]["byte_fallback_rate"] is None and rows[0]["chars"] == 6


def test_json_carries_the_source_defined_metrics(cli):
    code, out, err = cli("compare", "m0.json", "-f", "t.txt", "--json")
    assert (code, err) == (0, "")
    row = json_lines(out)[0]
    for key in ("shannon_efficiency", "renyi_efficiency", "shannon_efficiency_observed", "renyi_efficiency_observed",
                "type_token_ratio", "avg_token_rank", "strr", "utf8_whole_token_rate", "utf8_split_char_rate",
                "digit_boundary_f1"):
        assert key in row
    # "ab ab\n" in characters: a b a b, two types used equally: Shannon over log2(2 types) = 1
    assert (row["shannon_efficiency_observed"], row["type_token_ratio"], row["avg_token_rank"]) == (1.0, 0.5, 1.5)
    assert (row["strr"], row["utf8_whole_token_rate"], row["renyi_alpha"]) == (0.0, 1.0, 2.5)
    assert row["utf8_split_char_rate"] is None and row["digit_boundary_f1"] is None  # no multi-byte chars, numbers


def test_several_renyi_orders_give_each_its_keys(cli):
    code, out, err = cli("compare", "m0.json", "-f", "t.txt", "--json", "--renyi-alpha", "2.5", "3.0")
    assert (code, err) == (0, "")
    row = json_lines(out)[0]
    assert row["renyi_alpha"] == 2.5
    assert {"renyi_efficiency", "renyi_efficiency@3", "renyi_efficiency_observed", "renyi_efficiency_observed@3"} <= set(row)
    code, out, _ = cli("compare", "m0.json", "-f", "t.txt", "--json", "--renyi-alpha", "3")
    assert json_lines(out)[0]["renyi_efficiency"] == row["renyi_efficiency@3"]
    code, out, _ = cli("compare", "m0.json", "-f", "t.txt", "--csv", "--renyi-alpha", "2.5", "3")
    header = next(csv.reader(io.StringIO(out)))
    assert header[-2:] == ["renyi_efficiency@3", "renyi_efficiency_observed@3"]
    code, out, _ = cli("compare", "m0.json", "-f", "t.txt", "--renyi-alpha", "2.5", "3")
    assert out.splitlines()[-1].split()[0] == "renyi_efficiency_observed@3"


@pytest.mark.parametrize("alpha", ["-1", "x", "inf"])
def test_a_bad_renyi_order_is_a_usage_error(cli, alpha):
    code, out, err = cli("compare", "m0.json", "-f", "t.txt", "--renyi-alpha", alpha)
    assert code != 0 and out == "" and "Rényi order" in err


def test_table_has_one_column_per_model(cli):
    code, out, err = cli("compare", "m0.json", "m2.json", "-f", "t.txt")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "m0.json", "m2.json"]
    assert [line.split()[0] for line in lines[1:]] == list(METRIC_KEYS)
    assert lines[1].split() == ["tokens", "4", "2"]
    assert lines[8].split() == ["continued_words", "100.00%", "0.00%"]
    assert lines[12].split() == ["byte_fallback_rate", "-", "-"]
    assert len({len(line) for line in lines[:12]}) == 1  # aligned


def test_csv_rows_parse_back(cli):
    code, out, err = cli("compare", "m0.json", "m2.json", "-f", "t.txt", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert (code, err) == (0, "")
    assert [(r["model"], r["tokens"], r["byte_fallback_rate"]) for r in rows] == [("m0.json", "4", ""), ("m2.json", "2", "")]


def test_steps_per_model_and_for_all(cli):
    code, out, _ = cli("compare", "m2.json@0", "m2.json@1", "m2.json", "-f", "t.txt", "--json")
    assert code == 0
    assert [(r["model"], r["tokens"]) for r in json_lines(out)] == [("m2.json@0", 4), ("m2.json@1", 2), ("m2.json", 2)]
    code, out, _ = cli("compare", "m2.json", "--step", "0", "-f", "t.txt", "--json")
    assert [(r["model"], r["tokens"]) for r in json_lines(out)] == [("m2.json@0", 4)]


def test_an_unreadable_model_is_reported_and_the_others_still_print(cli):
    code, out, err = cli("compare", "m0.json", "junk.json", "missing.json", "m2.json@9", "m2.json",
                         "-f", "t.txt", "--json")
    assert code == 2
    assert [r["model"] for r in json_lines(out)] == ["m0.json", "m2.json"]
    lines = err.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("tokviz compare: junk.json: ")
    assert lines[1].startswith("tokviz compare: missing.json: ")
    assert lines[2].startswith("tokviz compare: m2.json@9: step 9 is past the last merge (2)")
    assert "Traceback" not in err


def test_table_with_a_bad_model_still_shows_the_good_one(cli):
    code, out, err = cli("compare", "junk.json", "m0.json", "-f", "t.txt")
    assert code == 2 and out.splitlines()[0].split() == ["metric", "m0.json"]
    assert err.count("\n") == 1


def test_empty_text_gives_zero_tokens_and_null_ratios(cli):
    code, out, err = cli("compare", "m0.json", "-f", "empty.txt", "--json")
    assert (code, err) == (0, "")
    row = json_lines(out)[0]
    assert (row["tokens"], row["chars"], row["words"], row["vocab_used"]) == (0, 0, 0, 0.0)
    assert row["chars_per_token"] is None and row["fertility"] is None and row["renyi_efficiency"] is None
    code, out, err = cli("compare", "m0.json", "-f", "empty.txt")
    assert code == 0 and out.splitlines()[5].split() == ["chars_per_token", "-"]


def test_binary_and_missing_text_files_are_one_line_errors(cli):
    code, out, err = cli("compare", "m0.json", "-f", "bin.dat")
    assert (code, out) == (2, "") and "binary" in err and err.count("\n") == 1
    code, out, err = cli("compare", "m0.json", "-f", "nope.txt")
    assert (code, out) == (2, "") and "nope.txt" in err and err.count("\n") == 1


def test_by_document_json(cli):
    code, out, err = cli("compare", "m2.json", "-f", "u.txt", "--by-document", "--json")
    assert (code, err) == (0, "")
    row = json_lines(out)[0]
    assert list(row) == ["model", *METRIC_KEYS, "renyi_alpha", "numbers_by_length", "gini", "reference", "documents"]
    docs = row["documents"]
    assert [(d["document"], d["title"], d["script"]) for d in docs] == [
        (1, "Titre", "Latin"), (2, "Title", "Latin"), (3, "Other", "Latin")]
    assert list(docs[0]) == ["document", "title", "script", "premium", *METRIC_KEYS]
    assert sum(d["tokens"] for d in docs) == row["tokens"]
    assert row["reference"] == 1 and docs[0]["premium"] == 1.0
    assert docs[1]["premium"] == docs[1]["tokens"] / docs[0]["tokens"]
    assert 0 < row["gini"] < 1


def test_by_document_reference_table_and_csv(cli):
    code, out, err = cli("compare", "m0.json", "m2.json", "-f", "u.txt", "--by-document", "--reference", "Title")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[2].split()[:3] == ["2*", "Title", "Latin"]
    assert lines[-2].startswith("  ") and "Gini of premiums" in lines[-2]
    assert lines[-1] == "* reference document for premiums: 2 Title"
    code, out, _ = cli("compare", "m0.json", "-f", "u.txt", "--by-document", "--csv", "--reference", "2")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["document"] for r in rows] == ["1", "2", "3", "all"]
    assert rows[1]["premium"] == "1.0" and rows[3]["gini"] != "" and rows[0]["gini"] == ""


@pytest.mark.parametrize("argv, message", [
    (["--reference", "1"], "--reference needs --by-document"),
    (["--by-document", "--reference", "Klingon"], "no document is titled 'Klingon'"),
    (["--by-document", "--reference", "7"], "documents 1..3"),
    (["--json", "--csv"], "not allowed with argument"),
    (["--step", "-1"], "expected a number >= 0"),
])
def test_usage_errors(cli, argv, message):
    code, out, err = cli("compare", "m0.json", "-f", "u.txt", *argv)
    assert (code, out) == (2, "")
    usage, line = usage_and_error(err)  # argparse's own mistakes come with the usage
    assert message in line and line.startswith("tokviz compare")


def test_tiktoken_files_count_as_tiktoken_does(cli, tmp_path):
    from tests.real_tokenizers import load_reference, tiktoken_path

    text = "Hello, wörld! 你好 👋\n  indented line\n"
    (tmp_path / "h.txt").write_text(text, encoding="utf-8")
    names = ("r50k_base", "cl100k_base", "o200k_base")
    code, out, err = cli("compare", *(str(tiktoken_path(n)) for n in names), "-f", "h.txt", "--json")
    assert (code, err) == (0, "")
    rows = json_lines(out)
    for name, row in zip(names, rows, strict=True):
        ids = load_reference(name).encode_ordinary(text)
        assert row["model"].endswith(f"{name}.tiktoken")
        assert row["tokens"] == len(ids)
        assert row["vocab_used"] == len(set(ids)) / load_reference(name).n_vocab


def test_compare_asks_for_every_core_as_its_models_never_wait_for_each_other(cli, monkeypatch):
    """Models are measured side by side as independent parts (`choose_processes(independent=True)`):
    a busy moment does not turn a run into a one-process run."""
    from tokviz.app.cli import compare as cli_compare

    asked = []
    monkeypatch.setattr(cli_compare, "choose_processes", lambda **kw: asked.append(kw) or 1)
    code, _, _ = cli("compare", "m2.json", "m0.json", "-f", "t.txt", "--json")
    assert code == 0 and asked == [{"independent": True}]
