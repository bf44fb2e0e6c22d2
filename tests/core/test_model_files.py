"""Model files: versioned JSON, exact round trips, atomic writes, clear errors for bad files."""

from __future__ import annotations

import json

import pytest

from tokviz.core import (
    ModelFormatError,
    TokvizError,
    Training,
    TrainSettings,
    load_timeline,
    parse_word_counts,
    save_timeline,
    train,
)
from tokviz.core.model_files import FORMAT_NAME, FORMAT_VERSION, timeline_from_json, timeline_to_json

TEXT = "the cat sat on the mat; the cat ate the rat. 猫が座った。😀😀 " * 10


def timelines():
    yield "bytes-specials", train(
        TrainSettings(units="bytes", split="gpt4", vocab_size=300, special_tokens=("<|endoftext|>", "<s>")),
        texts=[TEXT],
    )
    yield "chars-eow-table", Training(
        TrainSettings(units="chars", split="whitespace", end_of_word="</w>", word_counts=True),
        table=parse_word_counts("low 5\nlower 2\nnewest 6\nwidest 3\n"),
    ).run()
    yield "regex-no-merges", train(TrainSettings(split=r"regex:\w+|\S", merges=0), texts=["abc"])


@pytest.fixture(params=list(timelines()), ids=lambda p: p[0])
def timeline(request):
    return request.param[1]


def test_round_trip_is_exact(tmp_path, timeline):
    path = tmp_path / "model.json"
    save_timeline(timeline, path)
    loaded = load_timeline(path)
    assert loaded.settings == timeline.settings
    assert loaded.base == timeline.base
    assert loaded.steps == timeline.steps  # MergeStep records, candidates included
    assert (loaded.corpus_length, loaded.n_chunks, loaded.finished) == (
        timeline.corpus_length, timeline.n_chunks, timeline.finished,
    )
    assert loaded.token_bytes() == timeline.token_bytes()
    assert loaded.special_ids == timeline.special_ids
    assert loaded.vocab_size == timeline.vocab_size
    text = "the cat sat, lower newest 😀 <s>"
    a = timeline.tokenizer().encode(text, allowed_special="all")
    b = loaded.tokenizer().encode(text, allowed_special="all")
    assert (a.ids, a.spans, a.tokens) == (b.ids, b.spans, b.tokens)
    # saving the loaded timeline gives the same bytes
    again = tmp_path / "again.json"
    save_timeline(loaded, again)
    assert again.read_bytes() == path.read_bytes()


def test_file_starts_with_format_name_and_version(tmp_path):
    timeline = train(TrainSettings(merges=3), texts=[TEXT])
    path = tmp_path / "m.json"
    save_timeline(timeline, path)
    raw = path.read_bytes()
    assert raw.startswith(b'{"format":"tokviz-model","version":1,')
    assert raw.isascii()
    d = json.loads(raw)
    assert (d["format"], d["version"]) == (FORMAT_NAME, FORMAT_VERSION) == ("tokviz-model", 1)
    assert d["steps"]["columns"] == ["left", "right", "count", "length", "candidates"]
    assert [row[:2] for row in d["steps"]["rows"]] == [list(s.pair) for s in timeline.steps]


def test_unfinished_timeline_round_trips(tmp_path):
    training = Training(TrainSettings(merges=10), texts=[TEXT])
    for step in training.steps():
        if step.rank == 3:
            break
    path = tmp_path / "m.json"
    save_timeline(training.timeline, path)
    loaded = load_timeline(path)
    assert loaded.n_merges == 4 and not loaded.finished


def test_save_replaces_atomically_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("old")
    timeline = train(TrainSettings(merges=2), texts=[TEXT])
    save_timeline(timeline, path)
    assert load_timeline(path).steps == timeline.steps
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_save_to_unwritable_place_is_an_error_and_writes_nothing(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    timeline = train(TrainSettings(merges=2), texts=[TEXT])
    with pytest.raises(TokvizError) as info:
        save_timeline(timeline, blocker / "m.json")
    assert str(info.value).startswith(f"{blocker / 'm.json'}: cannot write")
    with pytest.raises(TokvizError, match="cannot write"):
        save_timeline(timeline, tmp_path / "missing" / "m.json")
    with pytest.raises(TokvizError, match="cannot write"):
        save_timeline(timeline, tmp_path)  # a folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


# -- loading bad files ------------------------------------------------------------------------


@pytest.fixture
def good(tmp_path):
    timeline = train(TrainSettings(units="chars", vocab_size=40, special_tokens=("<s>",)), texts=[TEXT])
    return timeline_to_json(timeline)


def load_error(tmp_path, data: bytes | str | object) -> str:
    path = tmp_path / "bad.json"
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ModelFormatError) as info:
        load_timeline(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    return message[len(f"{path}: "):]


def test_truncated_files(tmp_path, good):
    raw = json.dumps(good).encode()
    for cut in (0, 1, 10, len(raw) // 3, len(raw) // 2, len(raw) - 1):
        message = load_error(tmp_path, raw[:cut])
        assert message.startswith("not a valid model file (JSON error at line 1, column")
        assert message.endswith("truncated?)")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ModelFormatError, match=r"nope\.json: no such file$"):
        load_timeline(tmp_path / "nope.json")
    with pytest.raises(ModelFormatError, match="is a folder, not a file"):
        load_timeline(tmp_path)


def test_not_utf8_and_not_json(tmp_path):
    assert load_error(tmp_path, b"\xff\xfe{}") == "not a tokviz model file (not UTF-8 JSON)"
    assert load_error(tmp_path, b"\x89PNG\r\n\x1a\n\x00") == "not a tokviz model file (not UTF-8 JSON)"
    assert load_error(tmp_path, "[1, 2]") == "not a tokviz model file (no 'format: tokviz-model' header)"
    assert load_error(tmp_path, {"format": "minbpe v1"}) == "not a tokviz model file (no 'format: tokviz-model' header)"


def test_deeply_nested_json_is_a_clear_error(tmp_path):
    message = load_error(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert message.startswith("not a valid model file")


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (2, "model file format version 2 is newer than this tokviz reads (1); update tokviz"),
        (99, "model file format version 99 is newer than this tokviz reads (1); update tokviz"),
        (0, "unknown model file format version 0"),
        ("1", "corrupt model file: missing format version"),
        (None, "corrupt model file: missing format version"),
    ],
)
def test_unknown_versions(tmp_path, good, version, message):
    assert load_error(tmp_path, {**good, "version": version}) == message


def test_missing_version(tmp_path, good):
    del good["version"]
    assert load_error(tmp_path, good) == "corrupt model file: missing format version"


def corrupt(good: dict, path: tuple, value):
    d = json.loads(json.dumps(good))
    target = d
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("steps", "rows", 0, 0), 10_000, "step 0 refers to an unknown id"),
        (("steps", "rows", 1, 1), -1, "step 1 refers to an unknown id"),
        (("steps", "rows", 2, 0), "a", "step 2 refers to an unknown id"),
        (("steps", "rows", 0), [1, 2], "step 0 is malformed"),
        (("steps", "rows", 0, 4), [[1, 2, 3]], "step 0 has a malformed candidate"),
        (("steps", "columns"), ["left"], "unknown step columns"),
        (("steps", "rows"), 5, "missing or malformed"),
        (("steps",), [], "missing or malformed"),
        (("steps",), KeyError, "missing or malformed"),
        (("base",), KeyError, "missing or malformed"),
        (("base", "units"), "bytes", "base units differ from the settings"),
        (("base", "units"), "words", "unknown units 'words'"),
        (("base", "symbols"), [1, 2], "base symbols must be strings"),
        (("base", "end_of_word"), "_", "base end-of-word marker differs from the settings"),
        (("settings", "colour"), "red", "unknown settings: colour"),
        (("settings", "split"), "regex:(", "invalid split regex"),
        (("settings", "split"), "gpt5", "unknown split 'gpt5'"),
        (("settings", "min_count"), 0, "minimum count must be at least 1"),
        (("settings",), "oops", "missing or malformed"),
        (("corpus_length",), "many", "bad corpus figures"),
    ],
)
def test_corrupt_fields(tmp_path, good, path, value, message):
    text = load_error(tmp_path, corrupt(good, path, value))
    assert text.startswith("corrupt model file: ")
    assert message in text


def test_end_of_word_marker_must_be_a_base_symbol(tmp_path):
    timeline = train(TrainSettings(units="chars", split="whitespace", end_of_word="</w>", merges=0), texts=["ab"])
    d = timeline_to_json(timeline)
    assert d["base"]["symbols"] == ["</w>", "a", "b"]
    d["base"]["symbols"] = ["a", "b"]
    assert load_error(tmp_path, d) == "corrupt model file: the end-of-word marker is not a base symbol"


def test_timeline_from_json_without_a_file(good):
    timeline = timeline_from_json(good)
    assert timeline.vocab_size == 40
    with pytest.raises(ModelFormatError, match="no 'format: tokviz-model' header"):
        timeline_from_json(None)


def test_saved_files_get_the_usual_mode_not_mkstemps_0600(tmp_path):
    """Atomic writes go through mkstemp (0600); the saved file gets 0666 minus the umask, and a
    replaced file keeps its mode."""
    import os
    import stat

    from tokviz.core.io.safe_files import write_atomic

    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        write_atomic(fresh, b"{}")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.json"
        kept.write_bytes(b"old")
        kept.chmod(0o640)
        write_atomic(kept, b"new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
        assert kept.read_bytes() == b"new"
    finally:
        os.umask(umask)


def test_saving_and_loading_give_the_collector_back(tmp_path, timeline):
    import gc

    from tokviz.core.model_files import load_model, save_model

    assert gc.isenabled()
    path = tmp_path / "m.json"
    save_model(timeline, path)
    assert gc.isenabled() and load_model(path) == timeline and gc.isenabled()
    save_timeline(timeline, path)
    assert load_timeline(path) == timeline and gc.isenabled()
    path.write_text('{"format": "tokviz-model", "version": 1}')
    for load in (load_model, load_timeline):
        with pytest.raises(ModelFormatError, match=r"^\S*m\.json: "):
            load(path)
        assert gc.isenabled()
