"""`LoadedTimeline`: a loaded tokenizer follows the model protocol; the CLI reads
every format `load_tokenizer` reads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, shared_file
from tokviz.core import TrainSettings, train
from tokviz.core.explain.loaded_timeline import LoadedTimeline
from tokviz.core.explain.tokens import merge_list
from tokviz.core.glitch import glitch_report
from tokviz.core.loading import load_tokenizer, open_timeline

R50K = ("vocab", "tiktoken", "r50k_base.tiktoken")
GPT2_JSON = ("vocab", "hf", "gpt2", "tokenizer.json")


@pytest.fixture(scope="module")
def r50k():
    return LoadedTimeline(load_tokenizer(shared_file(*R50K)))


def test_protocol_of_a_tiktoken_encoding(r50k):
    tl = r50k
    assert tl.algorithm == "pretrained" and tl.finished
    assert tl.n_steps == 50_000 == len(tl.steps)
    assert tl.vocab_size == 50_257 and len(tl.token_bytes()) == 50_257
    assert tl.length_at(10) is None
    assert tl.settings.name == "r50k_base" and tl.settings.kind == "tiktoken"
    assert tl.special_ids == {"<|endoftext|>": 50256}
    first = tl.steps[0]
    assert (first.rank, first.id, first.pair, first.token, first.count) == (0, 256, (220, 83), b" t", None)
    assert tl.steps[-1].rank == 49_999
    assert [m.id for m in tl.steps[5:8]] == [261, 262, 263]


def test_lazy_steps_equal_the_full_merge_list(r50k):
    tok = r50k.tokenizer()
    full = merge_list(tok)
    for i in (0, 1, 777, 12_345, 49_999):
        assert r50k.steps[i] == full[i]
    assert r50k.steps[100:103] == full[100:103]
    with pytest.raises(IndexError):
        r50k.steps[50_000]


def test_step_k_uses_the_first_k_merges(r50k):
    tok = r50k.tokenizer()
    assert tok.encode_ids(" SolidGoldMagikarp") == [43453]
    ids0 = tok.encode_ids(" SolidGoldMagikarp", step=0)
    assert tok.decode_tokens_bytes(ids0) == [bytes([b]) for b in b" SolidGoldMagikarp"]
    seg = r50k.segment(" the the", 5)
    ids5 = tok.encode_ids(" the the", step=5)
    assert list(seg.ids) == ids5 and seg.step == 5
    k = r50k.step_of(262) + 1  # " the"? the merge forming id 262
    seg = r50k.segment(r50k.token_bytes()[262].decode() * 2, k)
    assert seg.fresh and all(seg.ids[i] == 262 for i in seg.fresh)


def test_step_of_and_merge_tree(r50k):
    assert r50k.step_of(43453) == 43453 - 256
    assert r50k.step_of(65) is None  # a byte
    assert r50k.new_id_at(1) == 256 and r50k.new_id_at(0) is None
    tree = r50k.merge_tree(43453)
    assert tree.id == 43453 and tree.rank == 43453 - 256
    assert b"".join(bytes([r50k.token_bytes()[i][0]]) for i in tree.leaves()) == b" SolidGoldMagikarp"


def test_hf_tokenizer_json_and_trained_models():
    tl = LoadedTimeline(load_tokenizer(shared_file(*GPT2_JSON)))
    assert tl.n_steps == 50_000 and tl.settings.kind == "hf"
    assert tl.steps[0].pair == (220, 83)
    assert tl.tokenizer().encode_ids(" SolidGoldMagikarp") == [43453]
    assert tl.merge_tree(43453).leaves()  # HF merges build the token too


def test_open_timeline_reads_tokviz_models_as_themselves(tmp_path):
    from tokviz.core.model_files import save_model

    tl = train(TrainSettings(units="bytes", split="gpt4", merges=3), texts=["aaab aaab aaab"])
    path = tmp_path / "m.json"
    save_model(tl, path)
    back = open_timeline(path)
    assert back.algorithm == "bpe" and back.n_steps == 3


def test_glitch_report_finds_solidgoldmagikarp(r50k):
    rep = glitch_report(r50k.tokenizer(), "The quick brown fox. " * 50)
    unused = {r.id for r in rep.rows if r.count == 0}
    assert 43453 in unused and next(r for r in rep.rows if r.id == 43453).reason == "unused"
    assert rep.n_unreachable > 100 and rep.n_unused == len(unused)
    assert {r.reason for r in rep.rows} <= {"split", "merge", "partial_utf8", "unused", ""}
    assert rep.coverage.too_small  # 1,050 characters cannot say a GPT-2 token is unused


# -- CLI ----------------------------------------------------------------------------------------


def _cli(*args, env=None):
    import os

    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "tokviz", *args], capture_output=True, text=True, cwd=ROOT,
                          env=e, timeout=120)


def test_cli_encode_decode_with_tiktoken_and_hf_files():
    r = _cli("encode", "--ids", str(shared_file(*R50K)), " SolidGoldMagikarp")
    assert r.returncode == 0 and r.stdout.split() == ["43453"]
    r = _cli("encode", "--ids", "--step", "3", str(shared_file(*R50K)), " SolidGoldMagikarp")
    assert r.returncode == 0 and len(r.stdout.split()) == len(" SolidGoldMagikarp")  # first 3: " t", " a", "he"
    r = _cli("decode", str(shared_file(*GPT2_JSON)), "43453", "11")
    assert r.returncode == 0 and r.stdout == " SolidGoldMagikarp,\n"
    r = _cli("encode", "--ids", str(shared_file("vocab", "gpt2-data-gym", "encoder.json")), "hello world")
    assert r.returncode == 0 and r.stdout.split() == ["31373", "995"]


def test_cli_known_name_from_tiktoken_cache_dir(tmp_path):
    from tokviz.core.formats.openai_encodings import KNOWN_ENCODINGS

    src = shared_file("vocab", "tiktoken", "cl100k_base.tiktoken")
    import hashlib

    shutil.copy(src, tmp_path / hashlib.sha1(KNOWN_ENCODINGS["cl100k_base"].url.encode()).hexdigest())
    r = _cli("encode", "--ids", "cl100k_base", "hello world", env={"TIKTOKEN_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["15339", "1917"]


def test_cli_merges_in_rank_order_with_unknown_counts():
    r = _cli("merges", str(shared_file(*R50K)))
    assert r.returncode == 0
    header, *lines = r.stdout.splitlines()
    assert header == "rank\tid\tleft\tright\tcount" and len(lines) == 50_000
    assert lines[0].split("\t") == ["0", "256", "␣", "t", "count unknown"]  # a space token is seen
    r = _cli("merges", "--json", str(shared_file(*GPT2_JSON)))
    first = json.loads(r.stdout.splitlines()[0])
    assert first == {"rank": 0, "pair": [220, 83], "id": 256, "pair_hex": ["20", "74"], "token_hex": "2074",
                     "count": None}


def test_cli_errors_are_one_line_exit_2(tmp_path):
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"\x00garbage")
    for args in (("encode", str(bad), "hi"), ("encode", "no_such_tokenizer", "hi"),
                 ("encode", "--step", "60000", str(shared_file(*R50K)), "hi")):
        r = _cli(*args)
        assert r.returncode == 2, args
        assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    lines = shared_file(*R50K).read_text().splitlines()[:300]
    mine = tmp_path / "mine.tiktoken"
    mine.write_text("\n".join(lines) + "\n")
    r = _cli("encode", "--ids", str(mine), "hello")
    assert r.returncode == 2 and "split pattern" in r.stderr
    r = _cli("encode", "--ids", "--pattern", "gpt2", str(mine), "hello")
    assert r.returncode == 0 and r.stdout.split()
