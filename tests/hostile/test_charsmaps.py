"""Corrupt SentencePiece charsmaps (a ``.model``'s ``precompiled_charsmap``, a tokenizer.json's
``Precompiled``) are refused where sentencepiece refuses them, with one line; where it accepts
them, a ``.model`` gives sentencepiece's ids and a tokenizer.json gives tokenizers' ids.

The models are trained at test time with sentencepiece's trainer (``nmt_nfkc``: a real 240 KB
charsmap) and their charsmap is patched: the header and block size, the NUL at the end, the root,
values and child offsets out of range, a key without a value, 64 KB of random trie, random unit
corruptions (hypothesis). tokviz also refuses a trie that loops back on itself (sentencepiece takes
one whose labels agree, and then walks it as far as the text goes) and one whose reading passes a
budget."""

from __future__ import annotations

import base64
import io
import json
import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core.errors import ModelFormatError
from tokviz.core.formats.sentencepiece import charsmap as charsmap_module
from tokviz.core.formats.sentencepiece.charsmap import CharsMap, check_blob, check_units
from tokviz.core.formats.sentencepiece.proto import parse_model_proto

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

TEXT = "Ｈｅｌｌｏ　ｗｏｒｌｄ ﬁne café ① low  lower ｶﾀｶﾅ"


@pytest.fixture(scope="module")
def model() -> bytes:
    """A Unigram model with sentencepiece's ``nmt_nfkc`` charsmap, trained here."""
    rng = random.Random(0)
    words = ["low", "lower", "newest", "widest", "Ｈｅｌｌｏ", "ﬁne", "café", "①", "ｶﾀｶﾅ"]
    lines = [" ".join(rng.choice(words) for _ in range(8)) for _ in range(300)]
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=40,
                                   hard_vocab_limit=False, model_type="unigram",
                                   normalization_rule_name="nmt_nfkc", minloglevel=2, num_threads=1)
    return out.getvalue()


@pytest.fixture(scope="module")
def parts(model) -> tuple[list[int], bytes]:
    """(trie units, replacements) of the model's charsmap."""
    cm = parse_model_proto(model).normalizer.precompiled_charsmap
    (size,) = struct.unpack_from("<I", cm)
    return list(struct.unpack_from(f"<{size // 4}I", cm, 4)), cm[4 + size:]


def blob(units: list[int], strings: bytes, *, size: int | None = None) -> bytes:
    body = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(body) if size is None else size) + body + strings


# -- a model with another charsmap (protobuf fields rewritten) -------------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return n, i


def _fields(data: bytes):
    """(field number, wire type, raw bytes, payload) of each top-level field."""
    i = 0
    while i < len(data):
        key, j = _read_varint(data, i)
        wire = key & 7
        if wire == 2:
            length, j = _read_varint(data, j)
            end = j + length
        else:
            end = _read_varint(data, j)[1] if wire == 0 else j + (8 if wire == 1 else 4)
        yield key >> 3, wire, data[i:end], data[j:end]
        i = end


def with_charsmap(model: bytes, charsmap: bytes) -> bytes:
    """`model` with its normalizer's precompiled_charsmap (field 3.2) replaced."""
    out = bytearray()
    for num, wire, raw, payload in _fields(model):
        if num == 3 and wire == 2:
            spec = b"".join(_varint(2 << 3 | 2) + _varint(len(charsmap)) + charsmap if n == 2 else r
                            for n, _, r, _ in _fields(payload))
            raw = _varint(3 << 3 | 2) + _varint(len(spec)) + spec
        out += raw
    return bytes(out)


def sentencepiece_ids(model: bytes) -> list[int] | None:
    """sentencepiece's ids of `TEXT` with `model`, None where it refuses the model."""
    try:
        sp = spm.SentencePieceProcessor(model_proto=model)
    except (RuntimeError, OSError):
        return None
    return sp.encode(TEXT)


def one_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- the cases -------------------------------------------------------------------------------------

def _set(units: list[int], i: int, value: int) -> list[int]:
    out = list(units)
    out[i] = value
    return out


def _first_value(units) -> int:
    return next(i for i, u in enumerate(units) if u >> 31)


def _node(label: int, offset: int, *, leaf: bool = False) -> int:
    return offset << 10 | (256 if leaf else 0) | label


CASES = {
    # sentencepiece refuses these
    "blob shorter than its header": lambda u, s: b"abc",
    "trie larger than the blob": lambda u, s: blob(u, s, size=10**6),
    "trie not whole 1024-byte blocks": lambda u, s: blob(u[:-1], s),
    "trie size 512": lambda u, s: blob(u, s, size=512),
    "replacements without their NUL": lambda u, s: blob(u, s[:-1] + b"a"),
    "root made a value (sentencepiece's own test)": lambda u, s: blob(_set(u, 0, 0x80000000 | 0x00200000 << 10), s),
    "root offset outside the trie": lambda u, s: blob(_set(u, 0, _node(0, len(u))), s),
    "root offset 0": lambda u, s: blob(_set(u, 0, _node(0, 0)), s),
    "value 0x7FFFFFFF": lambda u, s: blob(_set(u, _first_value(u), 0xFFFFFFFF), s),
    "value just past the replacements": lambda u, s: blob(_set(u, _first_value(u), 0x80000000 | len(s)), s),
    "children outside the trie": lambda u, s: blob(_set(u, 100, _node(120, 100 ^ len(u))), s),
    "a key without a value": lambda u, s: blob(_set(u, 100, _node(120, 0, leaf=True)), s),
    "64 KB of random trie": lambda u, s: blob([random.Random(1).getrandbits(32) for _ in range(16384)], s),
    "an all-zero trie": lambda u, s: blob([0] * 256, b"\0"),
    # sentencepiece accepts these
    "the charsmap as trained": lambda u, s: blob(u, s),
    "a value on the last NUL": lambda u, s: blob(_set(u, _first_value(u), 0x80000000 | (len(s) - 1)), s),
    "children at the last unit": lambda u, s: blob(_set(u, 100, _node(120, 100 ^ (len(u) - 1))), s),
    "an unused unit relabelled": lambda u, s: blob(_set(u, 100, (u[100] & ~0xFF) | 0x7A), s),
}


@pytest.mark.parametrize("name", list(CASES))
def test_model_charsmaps_are_refused_where_sentencepiece_refuses_them(model, parts, cli, tmp_path, name):
    patched = with_charsmap(model, CASES[name](*parts))
    path = tmp_path / "m.model"
    path.write_bytes(patched)
    want = sentencepiece_ids(patched)
    if want is None:
        assert "precompiled charsmap" in one_line(*cli("encode", "--ids", str(path), TEXT))
    else:
        code, out, err = cli("encode", "--ids", str(path), TEXT)
        assert (code, out.split(), err) == (0, [str(i) for i in want], "")


@pytest.mark.parametrize("name", list(CASES))
def test_tokenizer_json_precompiled_charsmaps_are_checked_the_same_way(model, parts, cli, tmp_path, name):
    cm = CASES[name](*parts)
    proto = parse_model_proto(model)
    d = {"version": "1.0", "added_tokens": [], "post_processor": None, "decoder": None,
         "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(cm).decode()},
         "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
         "model": {"type": "Unigram", "unk_id": 0, "vocab": [[p, s] for p, s in zip(proto.pieces, proto.scores)]}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    if sentencepiece_ids(with_charsmap(model, cm)) is None:
        assert "precompiled charsmap" in one_line(*cli("encode", "--ids", str(path), TEXT))
    else:
        want = tokenizers.Tokenizer.from_file(str(path)).encode(TEXT).ids
        code, out, err = cli("encode", "--ids", str(path), TEXT)
        assert (code, out.split(), err) == (0, [str(i) for i in want], "")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_unit_corruptions_are_refused_exactly_where_sentencepiece_refuses(model, parts, data):
    units, strings = parts
    corrupted = list(units)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.one_of(st.just(0), st.integers(0, len(units) - 1),
                                st.sampled_from([k for k, u in enumerate(units) if u >> 31][:200])))
        corrupted[i] = data.draw(st.one_of(
            st.integers(0, 2**32 - 1),
            st.builds(lambda b: units[i] ^ 1 << b, st.integers(0, 31)),
            st.builds(lambda v: 0x80000000 | v, st.integers(len(strings) - 3, len(strings) + 3)),
            st.builds(lambda lab, base, leaf: _node(lab, i ^ base, leaf=leaf),
                      st.integers(0, 255), st.integers(len(units) - 3, len(units) + 3), st.booleans())))
    cm = blob(corrupted, strings)
    accepted = sentencepiece_ids(with_charsmap(model, cm)) is not None
    try:
        check_units(np.frombuffer(cm, dtype="<u4", count=check_blob(cm) // 4, offset=4), len(strings))
    except ModelFormatError:
        assert not accepted
    else:
        assert accepted


def test_a_trie_looping_back_on_itself_is_refused(model, parts, cli, tmp_path):
    """A child offset equal to the label brings a node back to itself: ``aaaa…`` would walk it as
    far as the text goes (sentencepiece accepts it and does); no sentencepiece build makes one."""
    units, strings = parts
    root_children = units[0] >> 10
    a = root_children ^ ord("a")
    assert units[a] & 0xFF == ord("a")
    path = tmp_path / "m.model"
    path.write_bytes(with_charsmap(model, blob(_set(units, a, (units[a] & 0x1FF) | ord("a") << 10), strings)))
    assert "loops back on itself" in one_line(*cli("encode", "--ids", str(path), "aaaa"))


def test_a_trie_too_tangled_to_read_is_refused(model, parts, monkeypatch):
    cm = blob(*parts)
    assert CharsMap(cm).single  # the real charsmap takes ~0.1M steps
    monkeypatch.setattr(charsmap_module, "_SCAN_BUDGET", 1000)
    with pytest.raises(ModelFormatError, match="too tangled"):
        CharsMap(cm)


def test_a_corrupt_charsmap_in_the_window_is_one_message(window, qtbot, dialogs, model, parts, tmp_path):
    units, strings = parts
    path = tmp_path / "m.model"
    path.write_bytes(with_charsmap(model, blob(_set(units, 0, 0x80000000), strings)))
    window.corpus_panel.set_text("the user's corpus")
    dialogs.open_answer = str(path)
    window.commands.open_tokenizer.trigger()
    assert window.script.wait_for_tokenizer(60_000) != "opened"
    assert len(dialogs.errors) == 1 and "precompiled charsmap" in str(dialogs.errors[0])
    assert window.corpus_panel.text() == "the user's corpus"
