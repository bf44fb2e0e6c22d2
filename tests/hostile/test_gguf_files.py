"""Corrupt or malicious GGUF files: one line on stderr and status 2 from the CLI, never a traceback,
and nothing allocated for a count or length the file made up."""

from __future__ import annotations

import struct
import tracemalloc

import pytest

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.gguf import read_gguf

U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def _s(text: str | bytes) -> bytes:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str | bytes, t: int, raw: bytes) -> bytes:
    return _s(key) + struct.pack("<I", t) + raw


def _strings(items) -> bytes:
    return struct.pack("<IQ", STRING, len(items)) + b"".join(_s(x) for x in items)


def _ints(items, t: int = I32, code: str = "i") -> bytes:
    return struct.pack("<IQ", t, len(items)) + b"".join(struct.pack("<" + code, x) for x in items)


TOKENS = ["<unk>", "<s>", "</s>", "\u2581a", "b", "\u2581ab", "a"]


def _good_pairs() -> list[bytes]:
    return [
        _kv("general.architecture", STRING, _s("llama")),
        _kv("tokenizer.ggml.model", STRING, _s("llama")),
        _kv("tokenizer.ggml.tokens", ARRAY, _strings(TOKENS)),
        _kv("tokenizer.ggml.scores", ARRAY, struct.pack("<IQ", F32, 7) + struct.pack("<7f", 0, 0, 0, -1, -2, -0.5, -3)),
        _kv("tokenizer.ggml.token_type", ARRAY, _ints([2, 3, 3, 1, 1, 1, 1])),
    ]


def _file(pairs: list[bytes], *, version: int = 3, n_kv: int | None = None, tensors: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, len(pairs) if n_kv is None else n_kv) + b"".join(pairs)


def _write(tmp_path, data: bytes):
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    return path


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_sound_hand_made_file_encodes(cli, tmp_path):
    code, out, err = cli("encode", "--ids", str(_write(tmp_path, _file(_good_pairs()))), "ab")
    assert (code, err) == (0, "") and out.split() == ["1", "5"]  # BOS (llama.cpp adds it to llama vocabularies by default), "▁ab"


def _replace(key: str, t: int, raw: bytes) -> list[bytes]:
    pairs = _good_pairs()
    names = ["general.architecture", "tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores",
             "tokenizer.ggml.token_type"]
    pairs[names.index(key)] = _kv(key, t, raw)
    return pairs


HUGE = 1 << 62
BAD_FILES = {
    "version 1": (_file(_good_pairs(), version=1), "version 1"),
    "big-endian": (b"GGUF" + struct.pack(">IQQ", 3, 0, 5) + b"".join(_good_pairs()), "big-endian"),
    "huge key count": (_file(_good_pairs(), n_kv=HUGE), "keys"),
    "more keys than bytes": (_file(_good_pairs(), n_kv=1000), "keys"),
    "huge string length": (_file([_s("k")[:0] + struct.pack("<Q", HUGE) + b"abc"]), "runs past the end"),
    "huge string array": (_file(_replace("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", STRING, 1 << 40))),
                          "more than tokviz reads"),
    "string array longer than the file": (
        _file(_replace("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", STRING, 1 << 20) + _s("a"))),
        "runs past the end"),
    "huge int array": (_file(_replace("tokenizer.ggml.token_type", ARRAY, struct.pack("<IQ", I32, HUGE))),
                       "more than tokviz reads"),
    "nested array": (_file(_replace("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", ARRAY, 1)
                                    + struct.pack("<IQ", STRING, 1) + _s("a"))), "nested arrays"),
    "unknown value type": (_file(_replace("general.architecture", 99, b"")), "unknown value type 99"),
    "unknown element type": (_file(_replace("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", 77, 1))),
                             "unknown value type 77"),
    "tokens not an array": (_file(_replace("tokenizer.ggml.tokens", STRING, _s("abc"))), "not an array of strings"),
    "tokens of ints": (_file(_replace("tokenizer.ggml.tokens", ARRAY, _ints([1, 2, 3, 4, 5, 6, 7]))),
                       "not an array of strings"),
    "model not a string": (_file(_replace("tokenizer.ggml.model", U32, struct.pack("<I", 1))), "not a string"),
    "types of floats": (_file(_replace("tokenizer.ggml.token_type", ARRAY,
                                       struct.pack("<IQ", F32, 7) + b"\0" * 28)), "not an array of int32"),
    "too few scores": (_file(_replace("tokenizer.ggml.scores", ARRAY, struct.pack("<IQ", F32, 2) + b"\0" * 8)),
                       "2 values for 7 tokens"),
    "non-UTF-8 token": (_file(_replace("tokenizer.ggml.tokens", ARRAY, _strings(TOKENS[:6] + [b"\xff\xfe"]))),
                        "not valid UTF-8"),
    "non-UTF-8 key": (_file(_good_pairs() + [_kv(b"tokenizer.\xc3", BOOL, b"\x01")]), "not valid UTF-8"),
    "repeated key": (_file(_good_pairs() + [_kv("tokenizer.ggml.model", STRING, _s("gpt2"))]), "occurs twice"),
    "repeated token": (_file(_replace("tokenizer.ggml.tokens", ARRAY, _strings(TOKENS[:6] + ["b"]))), "twice"),
    "empty vocabulary": (_file(_replace("tokenizer.ggml.tokens", ARRAY, _strings([]))), "empty"),
    "no tokenizer": (_file(_good_pairs()[:1]), "holds no tokenizer"),
    "unknown tokenizer kind": (_file(_replace("tokenizer.ggml.model", STRING, _s("rwkv"))), "'rwkv'"),
    "gpt2 without merges": (_file(_replace("tokenizer.ggml.model", STRING, _s("gpt2"))), "no merges"),
    "gpt2 merge without a space": (
        _file(_replace("tokenizer.ggml.model", STRING, _s("gpt2"))
              + [_kv("tokenizer.ggml.merges", ARRAY, _strings(["ab"]))]), "not two tokens"),
    "BOS added but no BOS id": (
        _file(_replace("tokenizer.ggml.model", STRING, _s("gpt2"))
              + [_kv("tokenizer.ggml.merges", ARRAY, _strings(["a b"])),
                 _kv("tokenizer.ggml.add_bos_token", BOOL, b"\x01"),
                 _kv("tokenizer.ggml.bos_token_id", U32, struct.pack("<I", 99))]), "no tokenizer.ggml.bos_token_id"),
    "flag of the wrong type": (_file(_good_pairs() + [_kv("tokenizer.ggml.add_bos_token", U32, b"\1\0\0\0")]),
                               "not a bool"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_malformed_files_are_one_line_and_status_2(cli, tmp_path, name):
    data, words = BAD_FILES[name]
    line = _one_line_error(*cli("encode", "--ids", str(_write(tmp_path, data)), "ab"))
    assert words in line and "model.gguf" in line


def test_every_truncation_is_one_line(cli, tmp_path):
    data = _file(_good_pairs())
    for cut in range(4, len(data), 7):
        path = _write(tmp_path, data[:cut])
        line = _one_line_error(*cli("encode", "--ids", str(path), "ab"))
        assert "GGUF" in line, (cut, line)


@pytest.mark.parametrize("name", ["huge key count", "huge string array", "string array longer than the file",
                                  "huge int array", "huge string length"])
def test_made_up_counts_allocate_nothing_for_them(tmp_path, name):
    path = _write(tmp_path, BAD_FILES[name][0])
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError):
            read_gguf(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20, f"{peak:,} bytes"


def test_many_declared_tensors_are_never_read(cli, tmp_path):
    """Tensor counts are a model's business: a vocabulary-only reader ignores them."""
    path = _write(tmp_path, _file(_good_pairs(), tensors=HUGE) + b"\xff" * 64)
    code, out, err = cli("encode", "--ids", str(path), "ab")
    assert (code, err) == (0, "") and out.split() == ["1", "5"]
