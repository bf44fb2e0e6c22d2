"""How tokens look on screen: invisible characters made visible, partial UTF-8 shown as hex.

Pure functions shared by every view that prints a token (vocabulary table, later the token view
and the merge timeline). What it leaves out: colours and fonts (the panels' job).
"""

from __future__ import annotations

import unicodedata

SPACE_MARK = "␣"
NEWLINE_MARK = "↵"
TAB_MARK = "⇥"

# str.translate table for characters that would be invisible or break a table row. Only marks
# that common fonts have (DejaVu lacks the U+2400 control pictures): other control characters
# become escapes such as \x01, which is also what they are as bytes.
_VISIBLE = {0x20: SPACE_MARK, 0x0A: NEWLINE_MARK, 0x09: TAB_MARK, 0x0D: "\\r", 0x7F: "\\x7F", 0xA0: "⍽"}
for _c in range(0x20):
    _VISIBLE.setdefault(_c, f"\\x{_c:02X}")
for _c in range(0x80, 0xA0):  # C1 controls (NEL is a line break)
    _VISIBLE[_c] = NEWLINE_MARK if _c == 0x85 else f"\\u{_c:04X}"
for _c in (0x2028, 0x2029):
    _VISIBLE[_c] = NEWLINE_MARK
for _c in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD):
    _VISIBLE[_c] = f"⟨U+{_c:04X}⟩"
for _c in range(0x2000, 0x200B):  # en quad .. hair space
    _VISIBLE[_c] = SPACE_MARK
_VISIBLE[0x3000] = SPACE_MARK  # ideographic space
_VISIBLE[0x202F] = "⍽"
_VISIBLE[0x205F] = SPACE_MARK


def visible_text(text: str) -> str:
    """`text` with spaces and control characters replaced by visible marks.

    >>> visible_text("a b\\n")
    'a␣b↵'
    """
    return text.translate(_VISIBLE)


def visible_token(token: bytes) -> str:
    """A one-line, visible rendering of a token's bytes.

    Valid UTF-8 is shown as text (spaces as ␣, newlines as ↵, tabs as ⇥, other controls as
    escapes like ``\\x01``);
    bytes that are not a whole UTF-8 character (byte-level BPE splits emoji and CJK) are shown as
    ``\\xNN``.

    >>> visible_token(b" the")
    '␣the'
    >>> visible_token("é".encode()[:1])
    '\\\\xC3'
    """
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return _partial(token)
    return text.translate(_VISIBLE)


def _partial(token: bytes) -> str:
    """Decode what is valid and write the rest as upper-case ``\\xNN`` escapes."""
    out = []
    pos = 0
    while pos < len(token):
        try:
            out.append(token[pos:].decode("utf-8").translate(_VISIBLE))
            break
        except UnicodeDecodeError as exc:
            if exc.start:
                out.append(token[pos : pos + exc.start].decode("utf-8").translate(_VISIBLE))
            bad = token[pos + exc.start : pos + exc.end]
            out.append("".join(f"\\x{b:02X}" for b in bad))
            pos += exc.end
    return "".join(out)


def is_partial_utf8(token: bytes) -> bool:
    """True when the token's bytes are not a sequence of whole UTF-8 characters."""
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def hex_bytes(token: bytes) -> str:
    """``b"ab"`` -> ``'61 62'``."""
    return token.hex(" ").upper()


def describe_char(c: str) -> str:
    """``'é'`` -> ``"U+00E9 LATIN SMALL LETTER E WITH ACUTE"`` (for tooltips)."""
    return f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}"
