"""How tokens are printed in tables and captions: the token view's labels with whitespace marked."""

from __future__ import annotations

import pytest

from tokviz.core.display.tokens import escape_text, hex_bytes, is_partial_utf8, token_label, visible_token


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        (b" the", "␣the"),
        (b"\n\n", "↵↵"),
        (b"\t", "⇥"),
        (b"\r\n", "␍↵"),
        (b"\x00", "\\x00"),
        (b"\x1b[", "\\x1B["),
        (b"\x7f", "\\x7F"),
        ("é".encode(), "é"),
        ("é".encode()[:1], "<C3>"),
        ("👋".encode()[:2], "<F0><9F>"),
        ("a👋".encode()[:3] + b"b", "a<F0><9F>b"),
        ("\u200b".encode(), "⟨ZWSP⟩"),
        ("\u200d".encode(), "⟨ZWJ⟩"),
        ("\u00a0".encode(), "⍽"),
    ],
)
def test_visible_token(token, shown):
    assert visible_token(token) == shown


def test_tables_and_the_token_view_render_alike():
    """One rendering: a table's token text is the token view's label with whitespace shown."""
    for token in (b" a\tb", "\u200d".encode(), "👋".encode()[:2]):
        label, partial = token_label(token, show_whitespace=True)
        assert visible_token(token) == label
    assert token_label(" a".encode(), show_whitespace=False) == (" a", False)  # whitespace plain when off


def test_partial_and_hex():
    assert is_partial_utf8("€".encode()[:2]) is True
    assert is_partial_utf8("€".encode()) is False
    assert hex_bytes(b"\x00ab") == "00 61 62"
    assert escape_text("a b\n", show_whitespace=True) == "a␣b↵"
