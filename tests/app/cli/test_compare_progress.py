"""``tokviz compare``'s progress on stderr: a redrawn line on a terminal, a line now and then in a
pipe, nothing with ``--quiet``; the results on stdout stay the same."""

from __future__ import annotations

import io

import pytest

from tokviz.app.cli import compare_progress
from tokviz.app.cli.compare_progress import WIPE, CompareProgress
from tokviz.core import TrainSettings, train
from tokviz.core.model_files import save_model

UDHR_LIKE = "Titre\n    ab ab\n  \nTitle\n    abab ab ab\n  \nOther\n    ba\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def files(tmp_path):
    save_model(train(TrainSettings(units="chars", split="whitespace", merges=2, min_count=1), texts=["ab ab abc\n"]),
               tmp_path / "m.json")
    (tmp_path / "u.txt").write_text(UDHR_LIKE, encoding="utf-8")


def test_a_terminal_sees_each_model_start_and_the_line_wiped_at_the_end():
    term = Terminal()
    p = CompareProgress(term, ["a", "b"], documents=3)
    p.start()
    p.update(0, 3, 3, finished=True)
    p.update(1, 3, 3, finished=True)
    p.clear()
    shown = term.getvalue()
    assert "compare: model 1/2 a, document 1/3" in shown
    assert "compare: model 2/2 b, document 1/3" in shown
    assert shown.endswith(WIPE) and "\n" not in shown


def test_documents_redraw_at_most_every_redraw_interval(monkeypatch):
    term = Terminal()
    monkeypatch.setattr(compare_progress, "REDRAW_SECONDS", 3600.0)
    p = CompareProgress(term, ["a"], documents=100)
    p.start()
    for done in range(1, 100):
        p.update(0, done, 100, finished=False)
    assert term.getvalue().count(WIPE) == 1  # only the forced first line


def test_a_pipe_gets_no_line_in_a_short_run_and_whole_lines_in_a_long_one(monkeypatch):
    pipe = io.StringIO()
    p = CompareProgress(pipe, ["a", "b"])
    p.start()
    p.update(0, 1, 1, finished=True)
    assert pipe.getvalue() == ""
    monkeypatch.setattr(compare_progress, "LOG_SECONDS", 0.0)
    p.update(1, 1, 1, finished=False)
    assert pipe.getvalue() == "compare: model 2/2 b, 0:00\n"


def test_cli_prints_progress_lines_to_a_pipe_and_none_with_quiet(cli, files, monkeypatch):
    monkeypatch.setattr(compare_progress, "LOG_SECONDS", 0.0)
    code, out, err = cli("compare", "m.json", "m.json", "-f", "u.txt", "--by-document", "--json")
    assert code == 0
    lines = err.splitlines()
    assert lines and all(line.startswith("compare: model ") for line in lines)
    assert any("model 2/2 m.json, document 1/3" in line for line in lines)
    code, quiet_out, quiet_err = cli("compare", "m.json", "m.json", "-f", "u.txt", "--by-document", "--json", "--quiet")
    assert (code, quiet_err, quiet_out) == (0, "", out)
