"""``tokviz export MODEL -o OUT [--format hf|tiktoken] [--step K]``: the files load in
`tokenizers` and `tiktoken` with tokviz's ids; every error exits 2 with one line and no file."""

from __future__ import annotations

import json

import pytest

from tests.app.cli.usage import usage_and_error
from tokviz.core import TrainSettings, train
from tokviz.core.model_files import save_model
from tokviz.core.unigram.timeline import UnigramSettings, train_unigram

CORPUS = ("the lowest newer widest café 東京 👋🏽 it's 12345\r\n" * 20
          + "Tokenizers split text into pieces; pieces become ids.\n" * 20)
TEXTS = ["the newest pieces 👋🏽👋", "line\r\nline 東京都 café", "  spaces   and\ttabs ", ""]


@pytest.fixture(scope="module")
def timeline():
    return train(TrainSettings(merges=60, special_tokens=("<|end|>",)), texts=[CORPUS])


@pytest.fixture
def model(tmp_path, timeline):
    save_model(timeline, tmp_path / "model.json")
    return "model.json"


def test_export_tokenizer_json(cli, model, timeline, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    code, out, err = cli("export", model, "-o", "tokenizer.json")
    assert (code, err) == (0, "")
    assert out == "wrote tokenizer.json: 317 tokens, 60 merges\n"
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in TEXTS:
        assert hf.encode(text).ids == timeline.tokenizer().encode_ordinary(text).ids


@pytest.mark.parametrize("argv", [("-o", "mine.tiktoken"), ("-o", "mine.tiktoken", "--format", "tiktoken")])
def test_export_tiktoken_with_its_sidecar(cli, model, timeline, tmp_path, argv):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    code, out, err = cli("export", model, *argv, "--step", "20")
    assert (code, err) == (0, "")
    assert out == "wrote mine.tiktoken and mine.tiktoken.json: 277 tokens, 20 merges\n"
    side = json.loads((tmp_path / "mine.tiktoken.json").read_text(encoding="utf-8"))
    enc = tiktoken.Encoding("mine", pat_str=side["pattern"],
                            mergeable_ranks=load_tiktoken_bpe(str(tmp_path / "mine.tiktoken")),
                            special_tokens=side["special_tokens"])
    for text in TEXTS:
        assert enc.encode_ordinary(text) == timeline.tokenizer().encode_ordinary(text, step=20).ids
    assert enc.encode("<|end|>", allowed_special="all") == [276]


def test_format_flag_wins_over_the_extension(cli, model, tmp_path):
    code, out, _ = cli("export", model, "-o", "vocab.txt", "--format", "hf")
    assert code == 0 and json.loads((tmp_path / "vocab.txt").read_text(encoding="utf-8"))["model"]["type"] == "BPE"


@pytest.fixture
def other_models(tmp_path):
    save_model(train_unigram(UnigramSettings(vocab_size=60, seed_min_count=1), texts=[CORPUS]), tmp_path / "uni.json")
    save_model(train(TrainSettings(merges=10, units="chars"), texts=[CORPUS]), tmp_path / "chars.json")
    save_model(train(TrainSettings(merges=10, end_of_word="</w>"), texts=[CORPUS]), tmp_path / "eow.json")
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "taken.tiktoken.json").mkdir()


ERRORS = {
    "unknown extension": (["model.json", "-o", "out.bin"],
                          "tokviz export: cannot tell the format from 'out.bin'; give --format hf or --format tiktoken"),
    "unknown format": (["model.json", "-o", "o.json", "--format", "spm"],
                       "tokviz export: argument --format: invalid choice: 'spm'"),
    "output is a folder": (["model.json", "-o", "sub"], "tokviz export: output sub is a folder; give a file name"),
    "missing folder": (["model.json", "-o", "nope/t.json"], "tokviz export: output folder nope does not exist"),
    "step past the end": (["model.json", "-o", "t.json", "--step", "61"],
                          "tokviz export: --step 61 is past the last merge (60)"),
    "unwritable folder": (["model.json", "-o", "a-file/t.json"], "tokviz export: a-file is a file, not a folder"),
    "sidecar cannot be written": (["model.json", "-o", "taken.tiktoken"], "tokviz: taken.tiktoken.json: cannot write "),
    "unigram": (["uni.json", "-o", "t.json"], "tokviz: Unigram models are not exported: "),
    "characters to tiktoken": (["chars.json", "-o", "t.tiktoken"], "tokviz: tiktoken files hold byte-level tokens"),
    "end-of-word": (["eow.json", "-o", "t.json"], "tokviz: this model appends the end-of-word marker '</w>'"),
    "missing model": (["nope.json", "-o", "t.json"], "tokviz: "),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_exit_2_with_one_line_and_no_file(cli, model, other_models, tmp_path, case):
    (tmp_path / "sub").mkdir()
    argv, message = ERRORS[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = cli("export", *argv)
    assert code == 2 and out == ""
    usage, line = usage_and_error(err)
    assert line.startswith(message) and (usage != "") == (case == "unknown format"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# -- nothing lost: no export writes onto its input or onto a file the command did not name ------------


def test_tiktoken_without_the_suffix_keeps_the_model_beside_it(cli, tmp_path):
    """``export m.json -o m --format tiktoken`` used to write its sidecar as m.json, over the model."""
    save_model(train(TrainSettings(merges=20), texts=[CORPUS]), tmp_path / "m.json")
    model_bytes = (tmp_path / "m.json").read_bytes()
    code, out, err = cli("export", "m.json", "-o", "m", "--format", "tiktoken")
    assert (code, err) == (0, "") and out.startswith("wrote m and m.tiktoken.json: ")
    assert (tmp_path / "m.json").read_bytes() == model_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m", "m.json", "m.tiktoken.json"]
    code, out, _ = cli("encode", "--ids", "m", "the lowest newer")  # the sidecar is found again
    assert code == 0
    assert out == cli("encode", "--ids", "m.json", "the lowest newer")[1]
    code, out, _ = cli("export", "m.json", "-o", "m.tiktoken")  # same sidecar name with the suffix
    assert code == 0 and out.startswith("wrote m.tiktoken and m.tiktoken.json: ")


REFUSED = {
    "hf onto the model": (["m.json", "-o", "m.json", "--format", "hf"], "m.json is the model being exported"),
    "tiktoken onto the model": (["m.json", "-o", "m.json", "--format", "tiktoken"],
                                "m.json is the model being exported"),
    "through a symbolic link": (["link.json", "-o", "m.json"], "m.json is the model being exported"),
    "onto a hard link of it": (["m.json", "-o", "hard.json"], "hard.json is the model being exported"),
    "sidecar is the model": (["x.tiktoken.json", "-o", "x.tiktoken"], "x.tiktoken.json is the model being exported"),
    "sidecar name taken": (["m.json", "-o", "notes", "--format", "tiktoken"],
                           "notes.tiktoken.json exists and is not a tiktoken sidecar"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_exports_never_overwrite_inputs_or_unnamed_files(cli, tmp_path, case):
    save_model(train(TrainSettings(merges=20), texts=[CORPUS]), tmp_path / "m.json")
    (tmp_path / "link.json").symlink_to(tmp_path / "m.json")
    (tmp_path / "hard.json").hardlink_to(tmp_path / "m.json")
    save_model(train(TrainSettings(merges=5), texts=[CORPUS]), tmp_path / "x.tiktoken.json")
    (tmp_path / "notes.tiktoken.json").write_text('{"mine": "not a sidecar"}', encoding="utf-8")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    argv, message = REFUSED[case]
    code, out, err = cli("export", *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"tokviz: {message}") and err.count("\n") == 1, err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_an_older_sidecar_is_replaced(cli, tmp_path):
    save_model(train(TrainSettings(merges=20, special_tokens=("<|x|>",)), texts=[CORPUS]), tmp_path / "m.json")
    assert cli("export", "m.json", "-o", "out.tiktoken", "--step", "5")[0] == 0
    assert cli("export", "m.json", "-o", "out.tiktoken")[0] == 0
    side = json.loads((tmp_path / "out.tiktoken.json").read_text(encoding="utf-8"))
    assert side["special_tokens"] == {"<|x|>": 276}  # 256 bytes + 20 merges, not 5


def test_train_and_animate_refuse_to_write_onto_their_input(cli, tmp_path):
    (tmp_path / "c.txt").write_bytes(CORPUS.encode("utf-8"))
    code, out, err = cli("train", "c.txt", "--merges", "5", "--quiet", "-o", "c.txt")
    assert code == 2 and err == "tokviz train: output c.txt is the input file c.txt; give another name\n"
    assert (tmp_path / "c.txt").read_bytes() == CORPUS.encode("utf-8")
    save_model(train(TrainSettings(merges=5), texts=[CORPUS]), tmp_path / "m.json")
    before = (tmp_path / "m.json").read_bytes()
    code, out, err = cli("animate", "m.json", "--out", "m.json")
    assert code == 2 and err == "tokviz: --out m.json is the model file; give another name\n"
    assert (tmp_path / "m.json").read_bytes() == before
