"""`load_tokenizer` recognises every format by content: tokviz models, minbpe, data-gym files,
folders; and says clearly what is wrong with anything else."""

from __future__ import annotations

import base64
import shutil

import pytest

from tests.real_tokenizers import corpus, hf_path, load_ours, shared_file, tiktoken_path
from tokviz.core import BpeTokenizer, ModelFormatError, TrainSettings, save_timeline, train
from tokviz.core.bpe.ranked.tokenizer import RankBpeTokenizer
from tokviz.core.formats.data_gym import read_data_gym
from tokviz.core.formats.minbpe import parse_minbpe
from tokviz.core.formats.tokenizer_json.tokenizer import HfTokenizer
from tokviz.core.loading import load_tokenizer, merge_list_tokenizer, open_model
from tokviz.core.model_files import save_model
from tokviz.core.registry import make_training
from tokviz.core.unigram.timeline import UnigramSettings
from tokviz.core.unigram.tokenizer import UnigramTokenizer
from tokviz.core.wordpiece.timeline import WordPieceSettings
from tokviz.core.wordpiece.tokenizer import WordPieceTokenizer

# minbpe's known answer: "aaabdaaabac" with 3 merges -> [258, 100, 258, 97, 99]
MINBPE_MODEL = "minbpe v1\n\n0\n97 97\n256 97\n257 98\n"


def test_minbpe_known_answer(tmp_path):
    path = tmp_path / "basic.model"
    path.write_text(MINBPE_MODEL, encoding="utf-8")
    tok = load_tokenizer(path)
    assert isinstance(tok, BpeTokenizer)
    assert tok.encode_ids("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert tok.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"
    assert tok.source == str(path)


def test_minbpe_regex_model_with_specials(tmp_path):
    from tokviz.core.text.split import GPT4_SPLIT_PATTERN

    text = f"minbpe v1\n{GPT4_SPLIT_PATTERN}\n1\n<|endoftext|> 100257\n104 101\n256 108\n"
    tok = merge_list_tokenizer(parse_minbpe(text))
    assert tok.splitter.spec == "gpt4"
    assert tok.encode_ids("hel hello") == [257, 32, 257, 108, 111]
    assert tok.encode("x<|endoftext|>", allowed_special="all").ids == [120, 100257]
    minbpe_pattern = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""
    tok2 = merge_list_tokenizer(parse_minbpe(f"minbpe v1\n{minbpe_pattern}\n0\n"))
    assert tok2.splitter.chunks("Hi  there") == ["Hi", " ", " there"]


@pytest.mark.parametrize(("text", "message"), [
    ("minbpe v2\n\n0\n", "not a minbpe model"),
    ("minbpe v1\n\nx\n", "malformed"),
    ("minbpe v1\n\n0\n300 1\n", "not made yet"),
])
def test_minbpe_errors(tmp_path, text, message):
    path = tmp_path / "bad.model"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFormatError, match=message):
        load_tokenizer(path) if text.startswith("minbpe v1") else parse_minbpe(text)


def test_tokviz_model_files(tmp_path):
    timeline = train(TrainSettings(merges=50, special_tokens=("<|end|>",)), texts=[corpus("taylorswift.txt", 20_000)])
    path = tmp_path / "model.json"
    save_timeline(timeline, path)
    tok = load_tokenizer(path)
    assert isinstance(tok, BpeTokenizer) and tok.n_merges == 50
    text = "Taylor Swift<|end|>"
    assert tok.encode(text, allowed_special="all").ids == timeline.tokenizer().encode(text, allowed_special="all").ids


WORDS = "hug hugs pug pugs bun buns hugging unhug " * 20


@pytest.mark.parametrize(
    ("settings", "kind"),
    [(WordPieceSettings(merges=20), WordPieceTokenizer), (UnigramSettings(vocab_size=30), UnigramTokenizer)],
    ids=["wordpiece", "unigram"],
)
def test_tokviz_wordpiece_and_unigram_model_files(tmp_path, settings, kind):
    timeline = make_training(settings, texts=[WORDS]).run()
    path = tmp_path / "model.json"
    save_model(timeline, path)
    tok = load_tokenizer(path)  # the docstring's promise: every tokviz model
    assert isinstance(tok, kind) and tok.source == str(path)
    text = "hugs for the pugs, unhugging"
    assert tok.encode(text).ids == timeline.tokenizer().encode(text).ids
    found = open_model(path)  # the one reader: the timeline itself, steps included
    assert type(found) is type(timeline) and found.n_steps == timeline.n_steps


def test_the_cli_and_the_app_open_models_through_the_one_loader(tmp_path, monkeypatch, cli):
    from tokviz.core import loading as loader

    timeline = make_training(WordPieceSettings(merges=20), texts=[WORDS]).run()
    save_model(timeline, tmp_path / "wp.json")
    seen = []
    real = loader.open_model
    monkeypatch.setattr(loader, "open_model", lambda *a, **k: seen.append(a[0]) or real(*a, **k))
    for argv in (["encode", "--ids", "wp.json", "hugs"], ["decode", "wp.json", "5"], ["merges", "wp.json"]):
        assert cli(*argv)[0] == 0
    assert cli("encode", "--ids", "wp.json", "hugs")[1].split() == [str(i) for i in timeline.tokenizer().encode_ids("hugs")]
    from tokviz.engine.pretrained_tasks import load_any_timeline

    assert load_any_timeline(str(tmp_path / "wp.json")).n_steps == timeline.n_steps
    assert seen == ["wp.json"] * 4 + [str(tmp_path / "wp.json")]


def test_data_gym_files_give_r50k():
    bpe = shared_file("vocab", "gpt2-data-gym", "vocab.bpe")
    tok = load_tokenizer(bpe)
    r50k = load_ours("r50k_base")
    assert isinstance(tok, RankBpeTokenizer) and tok.name == "gpt2"
    assert tok.mergeable_ranks == r50k.mergeable_ranks
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    text = corpus("tinyshakespeare.txt", 20_000)
    assert tok.encode_ids(text) == r50k.encode_ids(text)
    via_encoder = load_tokenizer(bpe.parent / "encoder.json")
    assert via_encoder.encode_ids(" SolidGoldMagikarp") == [43453]


def test_data_gym_files_must_agree(tmp_path):
    bpe = shared_file("vocab", "gpt2-data-gym", "vocab.bpe")
    lines = bpe.read_text(encoding="utf-8").split("\n")
    (tmp_path / "vocab.bpe").write_text("\n".join(lines[:1] + lines[2:]), encoding="utf-8")
    shutil.copy(bpe.parent / "encoder.json", tmp_path / "encoder.json")
    with pytest.raises(ModelFormatError, match="disagree"):
        read_data_gym(tmp_path / "vocab.bpe")
    (tmp_path / "vocab.bpe").unlink()
    with pytest.raises(ModelFormatError, match="vocab.bpe"):
        load_tokenizer(tmp_path / "encoder.json")


@pytest.mark.parametrize("bpe, encoder, culprit", [
    ("#version: 0.2\nh e\nĠ x\x7fy\n", None, "'x\\x7fy'"),  # DEL: GPT-2 writes that byte as 'ġ'
    ("#version: 0.2\nh e\n", '{"h\u0200e": 256}', "'h\u0200e'"),
    ("#version: 0.2\nh e\n", '{"\u4e00": 256}', "'\u4e00'"),
])
def test_data_gym_characters_outside_the_byte_table_are_named(tmp_path, bpe, encoder, culprit):
    (tmp_path / "vocab.bpe").write_text(bpe, encoding="utf-8")
    if encoder is not None:
        (tmp_path / "encoder.json").write_text(encoder, encoding="utf-8")
    with pytest.raises(ModelFormatError, match="outside GPT-2's byte table") as info:
        read_data_gym(tmp_path / "vocab.bpe")
    assert culprit in str(info.value)


def test_folders(tmp_path):
    assert isinstance(load_tokenizer(hf_path("gpt2").parent), HfTokenizer)
    assert load_tokenizer(shared_file("vocab", "gpt2-data-gym")).name == "gpt2"
    shutil.copy(tiktoken_path("r50k_base"), tmp_path / "r50k_base.tiktoken")
    assert load_tokenizer(tmp_path).name == "r50k_base"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelFormatError, match="holds no tokenizer"):
        load_tokenizer(empty)


def test_unreadable_formats_are_named(tmp_path):
    other = tmp_path / "notes.json"
    other.write_text('{"hello": "world"}', encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not a tokviz model, tokenizer.json, tekken.json or encoder.json"):
        load_tokenizer(other)
    text = tmp_path / "notes.txt"
    text.write_text("just some words\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not a tokenizer file"):
        load_tokenizer(text)
    with pytest.raises(ModelFormatError, match="no such file"):
        load_tokenizer(tmp_path / "missing.tiktoken")


def test_all_tokenizers_share_the_grid():
    names = ("cl100k_base", "gpt2", "bert-base-uncased", "mistral-7b-v0.1", "tokenizer.model")
    for name in names:
        tok = load_ours(name) if name != "tokenizer.model" else load_tokenizer(
            shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model"))
        enc = tok.encode_ordinary("Grid check: ok")
        assert enc.ids == tok.encode_ids("Grid check: ok")
        assert len(enc.ids) == len(enc.tokens) == len(enc.spans)
        assert tok.decode_tokens_bytes(enc.ids) == enc.tokens
        assert isinstance(tok.decode_bytes(enc.ids), bytes) and isinstance(tok.decode(enc.ids), str)
        text, offsets = tok.decode_with_offsets(enc.ids)
        assert len(offsets) == len(enc.ids) and isinstance(text, str)
        assert tok.explain("check") and tok.n_vocab > 1000 and tok.name
        assert tok.token_bytes(enc.ids[0]) == enc.tokens[0]


PROBE = """
import json, sys
from tokviz.core.loading import load_tokenizer
for path in sys.argv[1:]:
    tok = load_tokenizer(path)
    assert tok.decode(tok.encode_ids("héllo wörld")) .strip() in ("héllo wörld", "hello world")
extras = sorted(m for m in sys.modules
                if m.split(".")[0] in ("tiktoken", "tokenizers", "sentencepiece", "google", "PySide6", "pyqtgraph"))
print(json.dumps(extras))
"""


def test_encoding_needs_neither_tiktoken_nor_tokenizers_nor_qt(tmp_path):
    import json
    import subprocess
    import sys

    paths = [str(tiktoken_path("cl100k_base")), str(hf_path("bert-base-uncased")), str(hf_path("mistral-7b-v0.1")),
             str(shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.model"))]
    result = subprocess.run([sys.executable, "-c", PROBE, *paths], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_opening_a_tiktoken_file_as_the_window_does_builds_its_tables_while_loading(tmp_path, monkeypatch):
    """File > Open runs `load_any_timeline` on a worker: the tables a first long encode would build
    (spans from ids, batch merger: `warm_up`) are ready before the window asks for anything."""
    from tokviz.engine.pretrained_tasks import load_any_timeline

    warmed = []
    warm_up = RankBpeTokenizer.warm_up

    def recorded(tok):
        warmed.append(tok)
        warm_up(tok)

    monkeypatch.setattr(RankBpeTokenizer, "warm_up", recorded)

    path = tmp_path / "tiny.tiktoken"
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257})
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()), encoding="utf-8")
    tok = load_any_timeline(str(path), pattern="o200k").tokenizer()
    assert isinstance(tok, RankBpeTokenizer) and warmed == [tok]
    load_tokenizer(path, pattern="o200k")
    assert warmed == [tok]  # a plain load leaves them to first use


def test_the_window_loader_works_out_the_summary_off_the_gui_thread():
    """The loaded tokenizer's summary (its split family: a few tenths of a second) is computed by
    the loading task, so the panel that shows it on the GUI thread only reads it."""
    from tokviz.engine.pretrained_tasks import load_any_timeline

    timeline = load_any_timeline(str(tiktoken_path("r50k_base")))
    assert "fingerprint_lines" in vars(timeline)  # the cached property is filled
    assert any("GPT-2" in line for line in timeline.describe())
