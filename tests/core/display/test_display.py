"""How tokens are printed: invisible characters visible, partial UTF-8 as hex."""

from __future__ import annotations

import pytest

from tokviz.engine.display import hex_bytes, is_partial_utf8, visible_text, visible_token


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        (b" the", "␣the"),
        (b"\n\n", "↵↵"),
        (b"\t", "⇥"),
        (b"\r\n", "\\r↵"),
        (b"\x00", "\\x00"),
        (b"\x1b[", "\\x1B["),
        (b"\x7f", "\\x7F"),
        ("é".encode(), "é"),
        ("é".encode()[:1], "\\xC3"),
        ("👋".encode()[:2], "\\xF0\\x9F"),
        ("a👋".encode()[:3] + b"b", "a\\xF0\\x9Fb"),
        ("\u200b".encode(), "⟨U+200B⟩"),
        ("\u00a0".encode(), "⍽"),
    ],
)
def test_visible_token(token, shown):
    assert visible_token(token) == shown


def test_partial_and_hex():
    assert is_partial_utf8("€".encode()[:2]) is True
    assert is_partial_utf8("€".encode()) is False
    assert hex_bytes(b"\x00ab") == "00 61 62"
    assert visible_text("a b\n") == "a␣b↵"
