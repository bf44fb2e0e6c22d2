"""``tokviz decode --stream``: one line per id with the text it adds, as tokenizers' DecodeStream."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file


def test_stream_lines_hold_back_a_partial_character(cli):
    path = str(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    code, out, err = cli("decode", path, "--stream", "5303", "50169", "233", "0")
    assert (code, err) == (0, "")
    assert out == "5303\thi\n50169\t\n233\t 👋\n0\t!\n"


def test_stream_escapes_newlines_and_matches_the_reference(cli):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.decoders import DecodeStream

    path = shared_file("vocab", "hf", "mistral-7b-v0.1", "tokenizer.json")
    ref = tokenizers.Tokenizer.from_file(str(path))
    ids = ref.encode("Ein Baum\n東京 🌍").ids
    code, out, _ = cli("decode", str(path), "--stream", ",".join(map(str, ids)))
    stream = DecodeStream()
    expected = "".join(f"{i}\t{(stream.step(ref, i) or '').replace(chr(10), chr(92) + 'n')}\n" for i in ids)
    assert code == 0 and out == expected


def test_stream_bad_id_is_one_line(cli):
    path = str(shared_file("vocab", "hf", "gpt2", "tokenizer.json"))
    code, out, err = cli("decode", path, "--stream", "99999999")
    assert code == 2 and out == "" and err.count("\n") == 1 and "99999999" in err
