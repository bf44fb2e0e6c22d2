"""`tokviz train` reads a plain BPE corpus in pieces and trains the model the whole text gives."""

from __future__ import annotations

import pytest

from tokviz.app.cli.main import main
from tokviz.core import load_timeline
from tokviz.core.bpe.timeline import TrainSettings, train
from tokviz.core.text import file_pieces


@pytest.mark.parametrize("algorithm", ["bpe", "superbpe"])
def test_the_command_line_trains_on_pieces_as_on_the_whole_text(tmp_path, monkeypatch, algorithm):
    """`tokviz train` reads a plain BPE corpus in pieces (SuperBPE's stage two counts it whole):
    the model is the one trained on the whole text."""
    text = "".join(f"The {w} went to market\nand came back with {w}s\r\nor not. " for w in
                   ("cat", "dog", "owl", "émeu", "😀fox", "ox") * 40)
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(file_pieces, "COUNT_PIECE_BYTES", 500)  # many pieces for a small file
    seen = []
    real = file_pieces.file_pieces
    monkeypatch.setattr("tokviz.app.cli.main.file_pieces", lambda *a, **k: seen.append(1) or real(*a, **k))
    out = tmp_path / "model.json"
    extra = ["--transition", "40"] if algorithm == "superbpe" else []
    assert main(["train", str(path), "-o", str(out), "--vocab-size", "320", "--algorithm", algorithm,
                 "--quiet", *extra]) == 0
    assert bool(seen) == (algorithm == "bpe")
    if algorithm == "bpe":
        assert len(real(path)) > 10
        expected = train(TrainSettings(vocab_size=320), texts=[text])
        assert [s.pair for s in load_timeline(out).steps] == [s.pair for s in expected.steps]


def test_count_reads_in_pieces_and_writes_the_whole_texts_counts(tmp_path, monkeypatch):
    from tokviz.core.text.chunks import count_chunks
    from tokviz.core.text.count_files import read_counts
    from tokviz.core.text.split import parse_split

    text = "".join(f"Row {i} ends in a word\nnext {i}\r\nend. 😀 ünï\n" for i in range(300))
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(file_pieces, "COUNT_PIECE_BYTES", 400)
    assert len(file_pieces.file_pieces(path)) > 10
    out = tmp_path / "c.tsv"
    assert main(["count", str(path), "-o", str(out), "--split", "gpt4"]) == 0
    got = read_counts([out])
    assert list(got.table.items()) == list(count_chunks([text], parse_split("gpt4")).items())


COUNT_PROBE = """
import json, sys
import tokviz.core.text.chunks as chunks
seen, real = [], chunks.count_chunks

def spy(*args, **kwargs):
    seen.append("numpy" in sys.modules)
    return real(*args, **kwargs)

chunks.count_chunks = spy
from tokviz.app.cli.main import main  # the command as it starts
code = main(["train", sys.argv[1], "-o", sys.argv[2], "--vocab-size", "300", "--quiet"])
print(json.dumps([code, seen]))
"""


def test_the_command_line_counts_pieces_before_numpy_loads(tmp_path):
    """`tokviz train` counts a corpus read in pieces before the trainer's modules load: a forked
    counting child is a copy of a small process (numpy and the trainers add 13 MB to it)."""
    import json
    import subprocess
    import sys

    path = tmp_path / "corpus.txt"
    path.write_text("".join(f"line {i} ends in a word\n" for i in range(2000)), encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", COUNT_PROBE, str(path), str(tmp_path / "m.json")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [0, [False]]
    assert load_timeline(tmp_path / "m.json").n_steps == 300 - 256
