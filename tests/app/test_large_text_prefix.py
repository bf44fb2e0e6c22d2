"""The token view reads only a prefix of the corpus: a 30 MB file must never be joined whole on
the GUI thread (that stalled the window for up to 0.7 s when training started)."""

from __future__ import annotations

import pytest

from tokviz.engine.large_text import LargeText


def test_prefix_equals_the_start_of_the_whole_text():
    pieces = ["alpha\n", "beta gamma\n", "", "delta\n" * 3]
    lt = LargeText(pieces)
    whole = lt.text()
    for n in (0, 1, 6, 7, 17, 18, len(whole), len(whole) + 10):
        assert lt.prefix(n) == whole[:n]


def test_the_same_prefix_is_joined_once():
    """Every model switch asks the token view's corpus sample again: the read-only text gives back
    the prefix it joined last time instead of copying megabytes again."""
    lt = LargeText(["alpha\n", "beta gamma\n", "delta\n"])
    first = lt.prefix(10)
    assert first == "alpha\nbeta"
    assert lt.prefix(10) is first
    assert lt.prefix(3) == "alp" and lt.prefix(20) == "alpha\nbeta gamma\ndel"


def test_main_window_gives_the_token_view_a_bounded_prefix(make_window, monkeypatch):
    from tokviz.engine.token_view.token_view_engine import BASELINE_CORPUS_CHARS

    w = make_window(load_default_sample=False)
    text = "abc " * (BASELINE_CORPUS_CHARS // 2)
    requests = []
    monkeypatch.setattr(w.token_view_panel.engine, "request", lambda req, **kw: requests.append(req))
    monkeypatch.setattr(w.corpus_panel, "text", lambda: pytest.fail("the whole corpus was joined"))
    w.corpus_panel.set_text(text, title="t")
    w.token_view_panel.refresh()
    assert requests and requests[-1].corpus[1] == text[:BASELINE_CORPUS_CHARS]
