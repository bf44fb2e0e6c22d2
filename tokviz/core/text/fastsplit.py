"""Fast pre-tokenizer splitting for the GPT-2, cl100k and o200k patterns, with exactly the chunks
of one `regex` scan.

Two facts make it fast. (1) Text whose only non-ASCII characters are punctuation, symbols or
controls (curly quotes, dashes: most English and code) splits the same with ASCII classes (``A-Za-z``
for ``\\p{L}``, ``0-9`` for ``\\p{N}``, the six ASCII spaces for ``\\s``), and Python's `re`
runs those patterns about twice as fast as `regex` runs the Unicode ones. (2) A text may be cut at
the space between two ASCII letters (``a b``): the chunk before the space is letters (or a
contraction) that ends at the space whatever follows, no alternative joins a letter, a space and
a letter, and the scan of the rest starts at the space exactly as the scan of the whole text does
(the patterns look ahead, never behind). So big texts are cut into segments; each segment runs on
the ASCII pattern when it is clean, else on the Unicode one. Other patterns scan in one piece.
(3) With its classes spelled out as ranges of the Basic Multilingual Plane (`bmp_pattern`), a
pattern runs on `re` for any text without astral characters: a long one (`BMP_MIN_CHARS`, half
that for a text of other scripts: `other_scripts`) is split that way in runs, with no test of its
segments.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from functools import lru_cache

import regex

from tokviz.core.text.presets import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, O200K_SPLIT_PATTERN
from tokviz.core.text.unicode_tables import NEW_IN_UNICODE_17, WHITE_SPACE, PinnedPattern

HF_GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

_W = r"\t\n\x0b\x0c\r "  # \s on ASCII (White_Space; not \x1c-\x1f, which Python's \s has)
# the patterns with their classes left open: {L} letters, {N} numbers, {W} spaces (White_Space), and
# o200k's {U} (upper, title, modifier, other letters and marks) and {D} (lower, modifier, other, marks)
TEMPLATES = {
    GPT2_SPLIT_PATTERN: "|".join([
        r"'(?:[sdmt]|ll|ve|re)", r" ?[{L}]+", r" ?[{N}]+", r" ?[^{W}{L}{N}]+",
        r"[{W}]+\Z", r"[{W}]+(?![^{W}])", r"[{W}]",
    ]),
    GPT4_SPLIT_PATTERN: "|".join([
        r"'(?i:[sdmt]|ll|ve|re)", r"[^\r\n{L}{N}]?[{L}]+", r"[{N}]{{1,3}}",
        r" ?[^{W}{L}{N}]+[\r\n]*", r"[{W}]+\Z", r"[{W}]*[\r\n]", r"[{W}]+(?![^{W}])", r"[{W}]",
    ]),
    O200K_SPLIT_PATTERN: "|".join([
        r"[^\r\n{L}{N}]?[{U}]*[{D}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n{L}{N}]?[{U}]+[{D}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[{N}]{{1,3}}", r" ?[^{W}{L}{N}]+[\r\n/]*", r"[{W}]*[\r\n]+", r"[{W}]+(?![^{W}])", r"[{W}]+",
    ]),
    HF_GPT2_PATTERN: "|".join([
        "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", r" ?[{L}]+", r" ?[{N}]+", r" ?[^{W}{L}{N}]+",
        r"[{W}]+(?![^{W}])", r"[{W}]+",
    ]),
}
# the same patterns for text without non-ASCII letters, numbers, marks or spaces
ASCII_PATTERNS = {p: t.format(L="A-Za-z", N="0-9", U="A-Z", D="a-z", W=_W) for p, t in TEMPLATES.items()}
# the classes of the whole Basic Multilingual Plane, as `regex` reads them and tiktoken's Unicode 16
# knows them (`PinnedPattern`): for texts without astral characters (`bmp_pattern`)
BMP_CLASSES = {"L": r"\p{L}", "N": r"\p{N}", "U": r"\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}", "D": r"\p{Ll}\p{Lm}\p{Lo}\p{M}",
                "W": r"\s"}
# Building the BMP patterns costs 15 ms (gpt2, cl100k) to 27 ms (o200k) of a process; the scan then
# takes a third to a half of the segments' time (a megabyte of udhr2: 92 -> 32 ms, of gutenberg30:
# 62 -> 34 ms). Mostly-English texts repay it from three quarters of a million characters (break-even
# about 0.55 M with cl100k's pattern, 0.95 M with o200k's), texts of other scripts (most segments on
# `regex`) from 384,000.
BMP_MIN_CHARS = 750_000
CLASS_L, CLASS_N, CLASS_W = 1, 2, 4  # `class_table`'s bits
BMP_DENSE_MIN_CHARS = 384_000
_SAMPLES, _SAMPLE_CHARS = 8, 2_048  # slices of a text that say whether it is of other scripts
ASTRAL = re.compile("[\U00010000-\U0010ffff]")
SEGMENT_CHARS = 512  # big texts are cut about this often
RUN_CHARS = 1 << 16  # at most this many characters are scanned at once: bounds the chunk lists, and the
# time one C call (stdlib re, a map over the chunks) holds the GIL from the window (about 3 ms)
_CUT = re.compile(r"[A-Za-z](?= [A-Za-z])")


def _ranges(cls: str, plane: str) -> str:
    """The code points of `plane` (the BMP in order, one character per code point) that regex class
    `cls` matches, as ``re`` class ranges: each run of matches is a range (one C scan, no loop per
    character)."""
    runs = ((m.start(), m.end() - 1) for m in regex.finditer(f"[{cls}]+", plane))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in runs)


@lru_cache(maxsize=1)
def _bmp() -> str:
    """Every code point of the BMP in order, surrogates included (a string of 65,536 characters)."""
    return array("I", range(0x10000)).tobytes().decode("utf-32-le", "surrogatepass")


@lru_cache(maxsize=1)
def bmp_classes() -> dict[str, str]:
    """`BMP_CLASSES` as ranges of code points for Python's `re` (without `NEW_IN_UNICODE_17`)."""
    return {name: "".join(_spans(mask, 1, _escaped_u)) for name, mask in class_masks().items()}


@lru_cache(maxsize=1)
def class_masks() -> dict[str, bytes]:
    """`BMP_CLASSES` as masks of the BMP: byte ``c`` is 1 where the class has code point ``c``
    (not `NEW_IN_UNICODE_17`), else 0."""
    # the new letters become U+0000 (in no class), so that each position is still its code point
    plane = re.compile(NEW_IN_UNICODE_17.regex_class(high=0xFFFF)).sub("\0", _bmp())
    out = {}
    for name, props in BMP_CLASSES.items():
        mask = bytearray(0x10000)
        for m in regex.finditer(f"[{props}]+", plane):
            mask[m.start() : m.end()] = b"\1" * (m.end() - m.start())
        out[name] = bytes(mask)
    return out


def _escaped_u(c: int) -> str:
    return f"\\u{c:04x}"


def _literal(c: int) -> str:
    """Code point `c` inside an `re` class: itself beyond ASCII (one character to parse, where an
    escape is six), else an escape (no ``]``, ``-``, ``^``, ``[`` or ``&&`` can be misread)."""
    return chr(c) if c >= 0x80 else f"\\x{c:02x}"


def _spans(mask: bytes, byte: int, spell) -> list[str]:
    """The runs of `byte` (0 or 1) in `mask` as class ranges, each end spelled by `spell`."""
    out = []
    find, other, end = mask.find, 1 - byte, len(mask)
    a = find(byte)
    while a >= 0:
        b = find(other, a)
        b = end if b < 0 else b
        out.append(spell(a) if b - a == 1 else f"{spell(a)}-{spell(b - 1)}")
        a = find(byte, b)
    return out


def bmp_class_text(mask: bytes) -> str:
    """An `re` class of exactly the BMP code points set in `mask`: ``[ranges]``, or ``[^ranges]``
    of the others when they are fewer. `re` compiles a class by walking each code point of its
    ranges in Python: the letters (48,000 code points with the CJK ideographs and Hangul) cost
    4.7 ms a class, their complement 17,000. Other planes are not meant (`bmp_pattern`'s texts)."""
    negate = mask.count(1) * 2 > len(mask)
    body = "".join(_spans(mask, 0 if negate else 1, _literal))
    if not body:  # all or nothing: neither spelling may be empty
        return "[\\x00-\\uffff]" if negate else "[^\\x00-\\uffff]"
    return f"[^{body}]" if negate else f"[{body}]"


CLASSED_PLANES = 4  # planes 0-3 hold every letter, number and space; 4-13 are unassigned, 14-16 none of them


@lru_cache(maxsize=2)
def class_table(bmp: bool = False, planes: int = CLASSED_PLANES) -> bytes:
    """Every code point's class as one byte, for compiled splitters: `CLASS_L` for a letter
    (``\\p{L}``), `CLASS_N` a number (``\\p{N}``), `CLASS_W` a space (``\\s``), 0 anything else, as
    the pinned patterns have them (`NEW_IN_UNICODE_17` in no class). Only the first `planes` planes
    are scanned (a test checks all 17 give the same table): 0.04 s, once; with `bmp`, the Basic
    Multilingual Plane's entries only (enough for a text without astral characters: 0.006 s)."""
    size = 0x10000 if bmp else 0x110000
    scan = min(size, planes << 16)
    plane = array("I", range(scan)).tobytes().decode("utf-32-le", "surrogatepass")
    plane = re.compile(NEW_IN_UNICODE_17.regex_class(high=scan - 1)).sub("\0", plane)
    out = bytearray(size)
    for bit, name in ((CLASS_L, "L"), (CLASS_N, "N"), (CLASS_W, "W")):
        for m in regex.finditer("[" + BMP_CLASSES[name] + "]+", plane):
            out[m.start():m.end()] = bytes(b | bit for b in out[m.start():m.end()])
    return bytes(out)


@lru_cache(maxsize=8)
def bmp_pattern(pattern: str) -> re.Pattern | None:
    """The split `pattern` on Python's `re` with classes spelled out over the BMP: the chunks of
    the pinned `regex` pattern on any text without astral characters, about twice as fast."""
    template = TEMPLATES.get(pattern)
    return None if template is None else re.compile(_TEMPLATE_PART.sub(_spelled, template))


# a template's bracket expression (its ``^``, its items), or a doubled brace of `str.format`
_TEMPLATE_PART = re.compile(r"\[(\^?)((?:\\.|[^\]\\])*)\]|\{\{|\}\}")
_CLASS_ITEM = re.compile(r"\{([A-Z])\}|\\(.)|(.)", re.S)  # a class name, an escape, a character
_ESCAPES = {"r": "\r", "n": "\n", "t": "\t"}


def _spelled(m: re.Match) -> str:
    """`_TEMPLATE_PART` as `bmp_pattern` writes it: a bracket that names classes as one class
    over the BMP (`bmp_class_text`); a doubled brace as one; any other bracket as it is."""
    negate, items = m.group(1), m.group(2)
    if items is None:
        return m.group(0)[0]
    if "{" not in items:
        return m.group(0)
    masks = class_masks()
    bits = 0
    for name, escaped, char in _CLASS_ITEM.findall(items):
        if name:
            bits |= int.from_bytes(masks[name], "little")
        else:
            bits |= 1 << (8 * ord(_ESCAPES.get(escaped, escaped) if escaped else char))
    if negate:
        bits ^= int.from_bytes(b"\1" * 0x10000, "little")
    return bmp_class_text(bits.to_bytes(0x10000, "little"))


@lru_cache(maxsize=1)
def unclean_chars() -> re.Pattern:
    """A non-ASCII character that is not punctuation, symbol or control (or is a space)."""
    # ASCII, the surrogates and the spaces become "a" (in none of the classes), each position still
    # its code point
    spaces = "".join(sorted(WHITE_SPACE))
    plane = re.compile(f"[\\x00-\\x7f\\ud800-\\udfff{re.escape(spaces)}]").sub("a", _bmp())
    kept = _ranges(r"\p{P}\p{S}\p{C}", plane)
    return re.compile(f"[^\\x00-\\x7f{kept}]")


def other_scripts(text: str) -> bool:
    """Whether a few slices of `text` hold many characters that send a segment to the Unicode
    pattern (2% or more: letters of scripts other than ASCII's, a language of accents), where
    English holds a few in ten thousand."""
    find = unclean_chars().findall
    step = len(text) // _SAMPLES
    found = sum(len(find(text, k * step, k * step + _SAMPLE_CHARS)) for k in range(_SAMPLES))
    return found * 50 >= min(len(text), _SAMPLES * _SAMPLE_CHARS) > 0


def cut_points(text: str, piece_chars: int | None = None) -> list[int]:
    """Positions ``0 = p0 < p1 < ... = len(text)`` where `text` may be cut (see module doc),
    about `piece_chars` apart."""
    piece_chars = piece_chars or SEGMENT_CHARS
    cuts = [0]
    n = len(text)
    pos = piece_chars
    search = _CUT.search
    while pos < n:
        m = search(text, pos)
        if m is None:
            break
        cuts.append(m.end())
        pos = m.end() + piece_chars
    cuts.append(n)
    return cuts


class FastSplitter:
    """`findall` of a split pattern, fast for the four known patterns (see module doc)."""

    def __init__(self, pattern: str, pinned: PinnedPattern | None = None) -> None:
        """`pattern` as tiktoken writes it; `pinned` its compiled form (made when not given)."""
        from tokviz.core.text.token_text import python_pattern

        self.pinned = pinned or PinnedPattern(python_pattern(pattern))
        ascii_pattern = ASCII_PATTERNS.get(pattern)
        self.pattern = pattern
        self.ascii = re.compile(ascii_pattern) if ascii_pattern is not None else None
        self.bmp: re.Pattern | None = None  # `bmp_pattern`, made for the first long text (or by `warm_up`)

    def warm_up(self, text: str | None = None) -> None:
        """Build now what the first split of a long non-ASCII text would build; given that `text`,
        what its split will need (no test of segments for a text without astral characters)."""
        if self.ascii is not None:
            self.bmp = bmp_pattern(self.pattern)
            if text is None or ASTRAL.search(text) is not None:
                unclean_chars()

    def findall(self, text: str) -> list[str]:
        """The chunks of `text` (as the Unicode pattern's ``findall``)."""
        if self.ascii is None:
            return self.pinned.findall(text)
        if text.isascii():
            return self.ascii.findall(text)
        out: list[str] = []
        for part in self.chunk_lists(text):
            out.extend(part)
        return out

    def chunk_lists(self, text: str) -> Iterator[list[str]]:
        """Lists of chunks whose concatenation is ``findall(text)``, run by run: neighbouring
        segments that take the same pattern are scanned together, at most `RUN_CHARS` at a time
        (a cut point is a place where both scans restart as the scan of the whole text does)."""
        if self.ascii is None:
            yield self.pinned.findall(text)
            return
        n = len(text)
        if text.isascii():
            if n <= RUN_CHARS:
                yield self.ascii.findall(text)
                return
            cuts = cut_points(text, RUN_CHARS)
            for a, b in zip(cuts, cuts[1:]):
                yield self.ascii.findall(text, a, b)  # a slice end: the scan sees text[a:b]
            return
        fast, slow = self.ascii.findall, self.pinned.findall
        if n <= 2 * SEGMENT_CHARS:  # a short text: one scan, no test of its characters
            yield slow(text)
            return
        if self.bmp is None and (n >= BMP_MIN_CHARS or (n >= BMP_DENSE_MIN_CHARS and other_scripts(text))):
            self.bmp = bmp_pattern(self.pattern)
        if self.bmp is not None and ASTRAL.search(text) is None:  # one pattern for all of it, run by run
            cuts = cut_points(text, RUN_CHARS)
            for a, b in zip(cuts, cuts[1:]):
                yield self.bmp.findall(text, a, b)
            return
        unclean = unclean_chars().search
        cuts = cut_points(text)
        start, kind = 0, None
        for a, b in zip(cuts, cuts[1:]):
            seg_fast = unclean(text, a, b) is None
            if kind is None:
                kind = seg_fast
            elif seg_fast != kind or a - start >= RUN_CHARS:
                yield fast(text[start:a]) if kind else slow(text[start:a])
                start, kind = a, seg_fast
        if start < n:
            yield fast(text[start:]) if kind else slow(text[start:])
