"""Hostile safetensors files: each is refused with one clear `WeightsError` naming what is wrong,
before any tensor data is read; pickled checkpoints are never opened."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from tests.core.weights.planted import write_model
from tokviz.core.errors import TokvizError
from tokviz.core.weights import SafetensorsFile, WeightsError, open_weights
from tokviz.core.weights.safetensors import MAX_HEADER_BYTES

EMB = "model.embed_tokens.weight"


def _file(tmp_path, header: bytes, data: bytes = b"", *, length: int | None = None):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(header) if length is None else length) + header + data)
    return path


def _raw(tmp_path, data: bytes):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    return path


def _entry(dtype="F32", shape=(2, 2), offsets=(0, 16)) -> dict:
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def _json_file(tmp_path, header: dict, n_data: int):
    return _file(tmp_path, json.dumps(header).encode(), bytes(n_data))


@pytest.mark.parametrize(("make", "words"), [
    (lambda p: _file(p, b"{}", length=10_000), "the header says it is 10,000 bytes long"),
    (lambda p: _file(p, b"{}", length=MAX_HEADER_BYTES + 1), "more than a safetensors file may have"),
    (lambda p: _file(p, b"{\"a\": [1,"), "not valid safetensors header JSON"),
    (lambda p: _file(p, b"[1, 2]"), "the header is not a JSON object"),
    (lambda p: _file(p, b"\xff{}"), "the header is not a JSON object"),
    (lambda p: _json_file(p, {EMB: _entry(offsets=(0, 16))}, 8), "past the end of the file"),
    (lambda p: _json_file(p, {EMB: _entry(offsets=(0, 16)), "b": _entry(offsets=(8, 24))}, 24),
     "overlaps the tensor before it"),
    (lambda p: _json_file(p, {EMB: _entry(dtype="F17")}, 16), "unknown dtype 'F17'"),
    (lambda p: _json_file(p, {EMB: _entry(shape=(3, 2))}, 16), "is 24 bytes but its offsets hold 16"),
    (lambda p: _json_file(p, {EMB: _entry(shape=(2, -2))}, 16), "the shape must be a list of whole numbers"),
    (lambda p: _json_file(p, {EMB: _entry(offsets=(16, 0))}, 16), "data_offsets must be [begin, end]"),
    (lambda p: _json_file(p, {EMB: _entry(offsets=(0, 16))}, 20), "4 bytes after the last tensor"),
    (lambda p: _json_file(p, {EMB: _entry(offsets=(4, 20))}, 20), "4 bytes before tensor"),
    (lambda p: _json_file(p, {EMB: {"dtype": "F32"}}, 0), "an entry needs dtype, shape and data_offsets"),
    (lambda p: _json_file(p, {"__metadata__": {"a": 1}}, 0), "__metadata__ must map names to strings"),
    (lambda p: _raw(p, b"abc"), "too short"),
])
def test_a_hostile_header_is_one_clear_error(tmp_path, make, words):
    path = make(tmp_path)
    with pytest.raises(WeightsError) as info:
        SafetensorsFile.open(path)
    message = str(info.value)
    assert words in message and "\n" not in message and str(path) in message
    with pytest.raises(TokvizError):  # and the same through the model opener
        open_weights(path)


def test_an_unreadable_dtype_of_the_needed_tensor_is_refused(tmp_path):
    path = _json_file(tmp_path, {EMB: _entry(dtype="I32")}, 16)
    assert SafetensorsFile.open(path).tensors[EMB].dtype == "I32"  # well-formed, but not float weights
    with pytest.raises(WeightsError, match="is I32; tokviz reads embedding matrices stored as F16, BF16, F32"):
        open_weights(path)


def test_a_one_dimensional_embedding_is_refused(tmp_path):
    path = _json_file(tmp_path, {EMB: _entry(shape=(4,))}, 16)
    with pytest.raises(WeightsError, match=r"has shape \[4\], not \[vocabulary, dimension\]"):
        open_weights(path)


@pytest.mark.parametrize("name", ["pytorch_model.bin", "model.pt", "consolidated.00.pth"])
def test_pickled_checkpoints_are_never_opened(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\x80\x04 not read")
    with pytest.raises(WeightsError, match="Python pickle, which can run code when loaded; tokviz reads .safetensors"):
        open_weights(path)
    folder = tmp_path / "only-pickles"
    folder.mkdir()
    (folder / name).write_bytes(b"\x80\x04")
    with pytest.raises(WeightsError, match="Python pickle"):
        open_weights(folder)


def test_an_index_cannot_point_outside_its_folder_or_at_a_pickle(tmp_path):
    write_model(tmp_path / "model.safetensors", tied=True)
    for shard, words in (("../model.safetensors", "must be a file name in the index's folder"),
                         ("pytorch_model-00001.bin", "Python pickle")):
        index = tmp_path / "model.safetensors.index.json"
        index.write_text(json.dumps({"weight_map": {EMB: shard}}), encoding="utf-8")
        with pytest.raises(WeightsError, match=words):
            open_weights(index)


def test_an_index_naming_a_shard_without_the_tensor_is_refused(tmp_path):
    write_model(tmp_path / "a.safetensors", tied=True, names=("other.weight", "x"))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {EMB: "a.safetensors"}}))
    with pytest.raises(WeightsError, match="which does not hold it"):
        open_weights(tmp_path)


def test_a_file_without_an_embedding_says_what_it_looked_for(tmp_path):
    from safetensors.numpy import save_file

    save_file({"model.layers.0.mlp.weight": np.zeros((4, 4), np.float32)}, str(tmp_path / "m.safetensors"))
    with pytest.raises(WeightsError, match="no embedding matrix found .*model.embed_tokens.weight"):
        open_weights(tmp_path / "m.safetensors")
