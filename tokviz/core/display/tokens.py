"""How a tokenized text is shown: one label per token, visible whitespace, byte tokens, round trips.

Everything here works from an `Encoding` (ids, token bytes and character spans together), never
by decoding tokens one at a time against each other: a token holding part of a character is shown
as its bytes (``<E2><9C>``), never as ``�``, and the tokens that build one character share its span
(`byte_groups` finds them so a view can bracket them together).

Labels: ordinary tokens show their text with invisible characters made visible. Control and
invisible characters (zero-width joiner, BOM, no-break space, ...) are always visible; space, tab,
newline and carriage return become ``␣ ⇥ ↵ ␍`` only when `show_whitespace` is on (a newline
always ends the displayed line).

A character no font on the screen can draw is shown as ``⟨U+XXXX⟩`` instead of an empty box: the
window tells this module which code points it can draw (`set_glyph_test`; the core cannot ask Qt),
and every label and caption below goes through the same translation tables.

This is the one place that formats a token for the screen: tables, trees, captions (`visible_token`)
and the token view (`token_labels`) all go through `token_label`. What this leaves out: colours
(`tokviz.core.display.palette`) and diagnostics with their export (`tokviz.core.display.diagnostics`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tokviz.core.encoding import Encoding

from .palette import assign_colors

SPACE_MARK = "␣"
TAB_MARK = "⇥"
NEWLINE_MARK = "↵"
CR_MARK = "␍"

# Token kinds (small ints: a 1 MB text has hundreds of thousands of tokens).
TEXT, BYTES, SPECIAL, UNKNOWN, EMPTY, INSERTED = range(6)
# EMPTY: an ordinary token covering no text (an end-of-word marker); INSERTED: a special token
# covering no text (a post-processor's [CLS] or [SEP]), shown where it was inserted
KIND_NAMES = ("text", "bytes", "special", "unknown", "empty", "inserted")

_NAMED = {
    0x00A0: "⍽",  # no-break space
    0x202F: "⍽",  # narrow no-break space
    0x00AD: "⟨SHY⟩",
    0x200B: "⟨ZWSP⟩",
    0x200C: "⟨ZWNJ⟩",
    0x200D: "⟨ZWJ⟩",
    0x200E: "⟨LRM⟩",
    0x200F: "⟨RLM⟩",
    0x2060: "⟨WJ⟩",
    0xFEFF: "⟨BOM⟩",
    0xFFFD: "⟨U+FFFD⟩",
    0x2028: "⟨LS⟩",
    0x2029: "⟨PS⟩",
    0x202A: "⟨LRE⟩",
    0x202B: "⟨RLE⟩",
    0x202C: "⟨PDF⟩",
    0x202D: "⟨LRO⟩",
    0x202E: "⟨RLO⟩",
    0x2066: "⟨LRI⟩",
    0x2067: "⟨RLI⟩",
    0x2068: "⟨FSI⟩",
    0x2069: "⟨PDI⟩",
    0x3000: "⟨IDSP⟩",
}


def _base_table() -> dict[int, str]:
    """Translation for characters that are always made visible."""
    table: dict[int, str] = {}
    for c in range(0x20):
        if c not in (0x09, 0x0A, 0x0D):
            table[c] = f"\\x{c:02X}"
    table[0x7F] = "\\x7F"
    for c in range(0x80, 0xA0):
        table[c] = f"\\u{c:04X}"
    for c in range(0x2000, 0x200B):  # en quad .. hair space: look like spaces, are not
        table[c] = "⟨U+%04X⟩" % c
    for c in range(0xFE00, 0xFE10):  # variation selectors
        table[c] = "⟨VS%d⟩" % (c - 0xFE00 + 1)
    table.update(_NAMED)
    return table


_glyph_test: Callable[[int], bool] | None = None  # can the screen draw this code point?


class _Table(dict):
    """A `str.translate` table: the fixed marks, and ``⟨U+XXXX⟩`` for a character `_glyph_test`
    says no font draws (looked up once per character, then kept)."""

    def __missing__(self, cp: int) -> str:
        test = _glyph_test
        shown = "⟨U+%04X⟩" % cp if cp >= 0x80 and test is not None and not test(cp) else chr(cp)
        self[cp] = shown
        return shown


_ALWAYS = _base_table()


def _tables() -> tuple[_Table, _Table, _Table]:
    """(whitespace hidden, whitespace shown, undrawable characters only)."""
    return (_Table({**_ALWAYS, 0x09: "    ", 0x0A: "", 0x0D: ""}),
            _Table({**_ALWAYS, 0x20: SPACE_MARK, 0x09: TAB_MARK, 0x0A: NEWLINE_MARK, 0x0D: CR_MARK}), _Table())


_HIDDEN_WS, _SHOWN_WS, _GLYPHS = _tables()


def set_glyph_test(test: Callable[[int], bool] | None) -> Callable[[int], bool] | None:
    """Tell the labels which code points the screen can draw: ``test(cp)`` is False for a
    character no available font has (it is then shown as ``⟨U+XXXX⟩``); None draws everything.
    `test` may be called from any thread, once per character. Returns the previous test.

    >>> previous = set_glyph_test(lambda cp: cp != 0x1F600)
    >>> visible_token("a😀b".encode()), undrawn_marked("é😀")
    ('a⟨U+1F600⟩b', 'é⟨U+1F600⟩')
    >>> _ = set_glyph_test(previous)
    """
    global _glyph_test, _HIDDEN_WS, _SHOWN_WS, _GLYPHS
    previous, _glyph_test = _glyph_test, test
    _HIDDEN_WS, _SHOWN_WS, _GLYPHS = _tables()  # forget what the previous test said
    return previous


def undrawn_marked(text: str) -> str:
    """`text` with only the characters no font can draw replaced by ``⟨U+XXXX⟩`` (captions,
    lesson text: everything else as it is)."""
    return text.translate(_GLYPHS)


def escape_text(text: str, *, show_whitespace: bool = False) -> str:
    """`text` as displayed: invisible characters always marked, whitespace marked on request.

    >>> escape_text("a\\u200db c")
    'a⟨ZWJ⟩b c'
    >>> escape_text("a b\\n", show_whitespace=True)
    'a␣b↵'
    """
    return text.translate(_SHOWN_WS if show_whitespace else _HIDDEN_WS)


def byte_label(data: bytes) -> str:
    """``<E2><9C>``: bytes that are not a whole character, upper-case hex in angle brackets."""
    return "".join(f"<{b:02X}>" for b in data)


def token_label(token: bytes, *, show_whitespace: bool = False) -> tuple[str, bool]:
    """(label, partial) of a token's bytes: its text when it is valid UTF-8, else the valid
    characters as text and the bytes of partial characters as ``<XX>``.

    >>> token_label("é".encode()[:1])
    ('<C3>', True)
    >>> token_label(b" \\xe4\\xbd")
    (' <E4><BD>', True)
    """
    try:
        return escape_text(token.decode("utf-8"), show_whitespace=show_whitespace), False
    except UnicodeDecodeError:
        pass
    out = []
    pos = 0
    while pos < len(token):
        try:
            out.append(escape_text(token[pos:].decode("utf-8"), show_whitespace=show_whitespace))
            break
        except UnicodeDecodeError as exc:
            if exc.start:
                out.append(escape_text(token[pos : pos + exc.start].decode("utf-8"), show_whitespace=show_whitespace))
            out.append(byte_label(token[pos + exc.start : pos + exc.end]))
            pos += exc.end
    return "".join(out), True


def visible_token(token: bytes) -> str:
    """A token on one line, for tables, trees and captions: the token view's label with
    whitespace always marked (one rendering everywhere).

    >>> visible_token(b" the"), visible_token("é".encode()[:1]), visible_token("\u200d".encode())
    ('␣the', '<C3>', '⟨ZWJ⟩')
    """
    return token_label(token, show_whitespace=True)[0]


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
    """``'é'`` -> ``"U+00E9 LATIN SMALL LETTER E WITH ACUTE"``."""
    return f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}"


@dataclass
class TokenLabels:
    """Per token: display label, kind (`TEXT`, `BYTES`, ...) and line breaks after it."""

    labels: list[str]
    kinds: list[int]
    breaks: list[int]  # newlines in the token: the view starts that many new lines after it


def token_labels(
    text: str, enc: Encoding, *, show_whitespace: bool = False, limit: int | None = None
) -> TokenLabels:
    """Labels of the first `limit` tokens (all by default) of `enc`, the encoding of `text`.

    Unknown tokens show the text they replaced (the view marks them as lost); special tokens show
    their name (`INSERTED` when they cover no text: a post-processor added them); other tokens
    with an empty span (an end-of-word marker) show their bytes.
    """
    n = len(enc.ids) if limit is None else min(limit, len(enc.ids))
    special = set(enc.special)
    unknown = set(enc.unknown)
    table = _SHOWN_WS if show_whitespace else _HIDDEN_WS
    labels: list[str] = []
    kinds: list[int] = []
    breaks: list[int] = []
    cache: dict[bytes, tuple[str, bool]] = {}
    tokens, spans = enc.tokens, enc.spans
    for i in range(n):
        tok = tokens[i]
        a, b = spans[i]
        if i in special:
            labels.append(tok.decode("utf-8", "replace"))
            kinds.append(INSERTED if a == b else SPECIAL)
            breaks.append(0)
            continue
        if i in unknown:
            labels.append(text[a:b].translate(table) or "[UNK]")
            kinds.append(UNKNOWN)
            breaks.append(text.count("\n", a, b))
            continue
        hit = cache.get(tok)
        if hit is None:
            hit = cache[tok] = token_label(tok, show_whitespace=show_whitespace)
        label, partial = hit
        labels.append(label)
        kinds.append(BYTES if partial else (EMPTY if a == b else TEXT))
        breaks.append(tok.count(b"\n"))
    return TokenLabels(labels, kinds, breaks)


def byte_groups(enc: Encoding, kinds: Sequence[int]) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of token indices that build one character together.

    Byte tokens holding part of a character share that character's span, so a run is a maximal
    sequence of neighbours with the same span of which at least one is a byte token, from its
    first byte token to its last (a ``▁`` a normalizer prepended shares the span, not the bytes).
    """
    groups: list[tuple[int, int]] = []
    spans = enc.spans
    n = len(kinds)
    i = 0
    while i < n:
        last, has_bytes = i, kinds[i] == BYTES
        while last + 1 < n and spans[last + 1][0] < spans[last][1]:  # overlapping: one character
            last += 1
            has_bytes = has_bytes or kinds[last] == BYTES
        if has_bytes:
            run = [k for k in range(i, last + 1) if kinds[k] == BYTES]
            groups.append((run[0], run[-1]))
        i = last + 1
    return groups


@dataclass
class TokenDisplay:
    """What a token view draws: labels and kinds, a colour slot per token (neighbours differ), the
    runs of byte tokens that build one character and that character under each run."""

    labels: TokenLabels
    slots: list[int]
    groups: list[tuple[int, int]]
    captions: list[str]


def token_display(text: str, enc: Encoding, *, n_colors: int, show_whitespace: bool = False,
                  labels: TokenLabels | None = None) -> TokenDisplay:
    """Everything `TokenFlowView` needs for the first ``len(labels)`` tokens of `enc` (all when
    `labels` is not given)."""
    if labels is None:
        labels = token_labels(text, enc, show_whitespace=show_whitespace)
    groups = byte_groups(enc, labels.kinds)
    spans = enc.spans
    return TokenDisplay(labels, assign_colors(enc.ids[: len(labels.labels)], n_colors), groups,
                        [escape_text(text[spans[a][0]:spans[b][1]]) for a, b in groups])


# -- counts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenStats:
    """The status line: tokens, characters, UTF-8 bytes and the ratios."""

    tokens: int
    chars: int
    bytes: int

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0

    def summary(self) -> str:
        """``'12 tokens · 40 characters · 44 bytes · 3.33 chars/token · 3.67 bytes/token'``."""
        return (f"{self.tokens:,} tokens · {self.chars:,} characters · {self.bytes:,} bytes · "
                f"{self.chars_per_token:.2f} chars/token · {self.bytes_per_token:.2f} bytes/token")


def token_stats(text: str, enc: Encoding) -> TokenStats:
    return TokenStats(len(enc.ids), len(text), len(text.encode("utf-8", "surrogatepass")))


# -- round trip -------------------------------------------------------------------------------


@dataclass
class RoundTrip:
    """Result of ``decode(encode(text)) == text``."""

    ok: bool
    decoded: str
    lossy: list[tuple[int, int]] = field(default_factory=list)  # character spans lost in `text`
    first_difference: int | None = None  # first character where `decoded` differs, if any
    note: str = ""

    def summary(self) -> str:
        if self.ok:
            return "round trip: decode(encode(text)) == text"
        if self.lossy:
            n = len(self.lossy)
            return f"round trip lossy: {n} position{'s' if n != 1 else ''} lost" + (f" ({self.note})" if self.note else "")
        return f"round trip differs at character {self.first_difference}" + (f" ({self.note})" if self.note else "")


def round_trip(text: str, enc: Encoding, decoded: str) -> RoundTrip:
    """Compare `decoded` (the tokenizer's ``decode(enc.ids)``) with `text`; lossy positions are the
    spans of unknown tokens and of text the pre-tokenizer dropped."""
    lossy = sorted([enc.spans[i] for i in enc.unknown] + list(enc.dropped))
    ok = decoded == text
    first = None
    note = ""
    if not ok:
        first = next((i for i, (x, y) in enumerate(zip(text, decoded, strict=False)) if x != y),
                     min(len(text), len(decoded)))
        if lossy:
            notes = []
            for what, spans in (("unknown", [enc.spans[i] for i in enc.unknown]), ("dropped", enc.dropped)):
                lost = sorted({text[a:b] for a, b in spans if b > a})
                if lost:
                    notes.append(f"{what}: " + ", ".join(repr(s) for s in lost[:12]) + (" …" if len(lost) > 12 else ""))
            note = "; ".join(notes)
        elif "".join(decoded.split()) == "".join(text.split()):
            note = "whitespace changed"
        else:
            note = "decoding adds or changes characters"
    return RoundTrip(ok, decoded, lossy, first, note)
