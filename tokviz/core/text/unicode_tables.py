"""Character tables of the Rust code behind tiktoken and tokenizers, where Python's differ.

tokviz's splitting runs on the `regex` module, whose Unicode tables (17.0 here) are newer than
those of the Rust regex engines in tiktoken and tokenizers (16.0). `NEW_IN_UNICODE_17` lists the
letters, numbers and marks they do not know yet; `PinnedPattern` treats them as tiktoken does.

tokenizers' BERT components take general categories from the ``unicode_categories`` crate, whose
tables are old (Unicode 8 era): `BERT_OTHER` (categories Cc, Cf, Co: removed by
``clean_text``), `BERT_NONSPACING_MARK` (Mn: removed when stripping accents) and
`BERT_PUNCTUATION` (P beyond ASCII: split off by ``BertPreTokenizer``); the StripAccents
normalizer's marks come from another crate with old tables too (`STRIP_ACCENTS_MARK`).
Unassigned code points are none of these. ``tests/core/text/test_unicode_tables.py`` checks
the tables against tiktoken and tokenizers (every code point with ``TOKVIZ_FULL_PARITY=1``).
What this leaves out: anything the three tokenizer families do not use.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import regex

from tokviz.core.text.pattern_limits import limited, limited_iter, time_limit, timeout_error


def _parse(table: str) -> tuple[list[int], list[int]]:
    starts, ends = [], []
    for item in table.split():
        a, _, b = item.partition("-")
        starts.append(int(a, 16))
        ends.append(int(b or a, 16))
    return starts, ends


class CharTable:
    """A set of code points stored as sorted ranges: ``c in table``."""

    def __init__(self, table: str) -> None:
        self.starts, self.ends = _parse(table)

    def __contains__(self, c: str) -> bool:
        o = ord(c)
        i = bisect_right(self.starts, o) - 1
        return i >= 0 and o <= self.ends[i]

    def regex_class(self, low: int = 0, high: int = 0x10FFFF) -> str:
        """The set (its code points from `low` to `high`) as a regex character class ``[...]``."""
        parts = []
        for a, b in zip(self.starts, self.ends):
            a, b = max(a, low), min(b, high)
            if a <= b:
                parts.append(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}")
        return "[" + "".join(parts) + "]"


NEW_IN_UNICODE_17 = CharTable(
    "0558 058B-058C 05C8-05C9 088F 0B53-0B54 0C5C 0CDC 1ACF-1AF0 "
    "208F 209D-209F A7CE-A7CF A7D2 A7D4 A7DD A7E2 A7F1 "
    "AB6C-AB6D 107BB-107BF 10940-10959 10EC5-10EC7 10ECB-10ECF 10ED9-10EEE 10EF0-10EFB 11B0A "
    "11B60-11B67 11DB0-11DDB 11DE0-11DE9 11DF0-11DF1 1246F 12475-1247F 12550-12686 16EA0-16EB8 "
    "16EBB-16ED3 16FF2-16FF6 187F8-187FF 18CD6-18CDA 18D09-18D20 18D80-18DF2 18E00-19191 191A0-191D2 "
    "1B123-1B128 1B168 1D127-1D128 1D250-1D252 1D25B-1D25C 1D25F 1D280-1D281 1D6A6 "
    "1DF1F-1DF24 1DF2B-1DF81 1DF90-1DF96 1DFCD-1DFFF 1E6C0-1E6DE 1E6E0-1E6F5 1E6FE-1E6FF 2B73A-2B73F "
    "2B81E 2CEA2-2CEAD 323B0-33479 3D000-3FC3F "
)
BERT_OTHER = CharTable(
    "0000-0008 000B-000C 000E-001F 007F-009F 00AD 0600-0605 061C 06DD "
    "070F 180E 200B-200F 202A-202E 2060-2064 2066-206F E000-F8FF FEFF "
    "FFF9-FFFB FFFD 110BD 1BCA0-1BCA3 1D173-1D17A E0001 E0020-E007F F0000-FFFFD "
    "100000-10FFFD "
)
BERT_NONSPACING_MARK = CharTable(
    "0300-033F 0342 0345-036F 0483-0487 0591-05BD 05BF 05C1-05C2 05C4-05C5 "
    "05C7 0610-061A 064B-065F 0670 06D6-06DC 06DF-06E4 06E7-06E8 06EA-06ED "
    "0711 0730-074A 07A6-07B0 07EB-07F3 0816-0819 081B-0823 0825-0827 0829-082D "
    "0859-085B 08E3-0902 093A 093C 0941-0948 094D 0951-0957 0962-0963 "
    "0981 09BC 09C1-09C4 09CD 09E2-09E3 0A01-0A02 0A3C 0A41-0A42 "
    "0A47-0A48 0A4B-0A4D 0A51 0A70-0A71 0A75 0A81-0A82 0ABC 0AC1-0AC5 "
    "0AC7-0AC8 0ACD 0AE2-0AE3 0B01 0B3C 0B3F 0B41-0B44 0B4D "
    "0B56 0B62-0B63 0B82 0BC0 0BCD 0C00 0C3E-0C40 0C46-0C47 "
    "0C4A-0C4D 0C55-0C56 0C62-0C63 0C81 0CBC 0CBF 0CC6 0CCC-0CCD "
    "0CE2-0CE3 0D01 0D41-0D44 0D4D 0D62-0D63 0DCA 0DD2-0DD4 0DD6 "
    "0E31 0E34-0E3A 0E47-0E4E 0EB1 0EB4-0EB9 0EBB-0EBC 0EC8-0ECD 0F18-0F19 "
    "0F35 0F37 0F39 0F71-0F72 0F74 0F77 0F79-0F7E 0F80 "
    "0F82-0F84 0F86-0F87 0F8D-0F92 0F94-0F97 0F99-0F9C 0F9E-0FA1 0FA3-0FA6 0FA8-0FAB "
    "0FAD-0FB8 0FBA-0FBC 0FC6 102D-1030 1032-1037 1039-103A 103D-103E 1058-1059 "
    "105E-1060 1071-1074 1082 1085-1086 108D 109D 135D-135F 1712-1714 "
    "1732-1734 1752-1753 1772-1773 17B4-17B5 17B7-17BD 17C6 17C9-17D3 17DD "
    "180B-180D 18A9 1920-1922 1927-1928 1932 1939-193B 1A17-1A18 1A1B "
    "1A56 1A58-1A5E 1A60 1A62 1A65-1A6C 1A73-1A7C 1A7F 1AB0-1ABD "
    "1B00-1B03 1B34 1B36-1B3A 1B3C 1B42 1B6B-1B73 1B80-1B81 1BA2-1BA5 "
    "1BA8-1BA9 1BAB-1BAD 1BE6 1BE8-1BE9 1BED 1BEF-1BF1 1C2C-1C33 1C36-1C37 "
    "1CD0-1CD2 1CD4-1CE0 1CE2-1CE8 1CED 1CF4 1CF8-1CF9 1DC0-1DF5 1DFC-1DFF "
    "20D0-20DC 20E1 20E5-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302D 3099-309A "
    "A66F A674-A67D A69E-A69F A6F0-A6F1 A802 A806 A80B A825-A826 "
    "A8C4 A8E0-A8F1 A926-A92D A947-A951 A980-A982 A9B3 A9B6-A9B9 A9BC "
    "A9E5 AA29-AA2E AA31-AA32 AA35-AA36 AA43 AA4C AA7C AAB0 "
    "AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEC-AAED AAF6 ABE5 ABE8 "
    "ABED FB1E FE00-FE0F FE20-FE2F 101FD 102E0 10376-1037A 10A01-10A03 "
    "10A05-10A06 10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 11001 11038-11046 1107F-11081 "
    "110B3-110B6 110B9-110BA 11100-11102 11127-1112B 1112D 11130-11134 11173 11180-11181 "
    "111B6-111BE 111CA-111CC 1122F-11231 11234 11236-11237 112DF 112E3-112EA 11300-11301 "
    "1133C 11340 11366-1136C 11370-11374 114B3-114B8 114BA 114BF-114C0 114C2-114C3 "
    "115B2-115B5 115BC-115BD 115BF-115C0 115DC-115DD 11633-1163A 1163D 1163F-11640 116AB "
    "116AD 116B0-116B5 116B7 1171D-1171F 11722-11725 11727-1172B 16AF0-16AF4 16B30-16B36 "
    "16F8F-16F92 1BC9D-1BC9E 1D167-1D169 1D17B-1D182 1D185-1D18B 1D1AA-1D1AD 1D242-1D244 1DA00-1DA36 "
    "1DA3B-1DA6C 1DA75 1DA84 1DA9B-1DA9F 1DAA1-1DAAF 1E8D0-1E8D6 E0100-E01EF "
)
# the StripAccents normalizer's combining marks (category M in the old tables it uses)
STRIP_ACCENTS_MARK = CharTable(
    "0300-036F 0483-0489 0591-05BD 05BF 05C1-05C2 05C4-05C5 05C7 0610-061A "
    "064B-065F 0670 06D6-06DC 06DF-06E4 06E7-06E8 06EA-06ED 0711 0730-074A "
    "07A6-07B0 07EB-07F3 0816-0819 081B-0823 0825-0827 0829-082D 0859-085B 08D4-08E1 "
    "08E3-0903 093A-093C 093E-094F 0951-0957 0962-0963 0981-0983 09BC 09BE-09C4 "
    "09C7-09C8 09CB-09CD 09D7 09E2-09E3 0A01-0A03 0A3C 0A3E-0A42 0A47-0A48 "
    "0A4B-0A4D 0A51 0A70-0A71 0A75 0A81-0A83 0ABC 0ABE-0AC5 0AC7-0AC9 "
    "0ACB-0ACD 0AE2-0AE3 0B01-0B03 0B3C 0B3E-0B44 0B47-0B48 0B4B-0B4D 0B56-0B57 "
    "0B62-0B63 0B82 0BBE-0BC2 0BC6-0BC8 0BCA-0BCD 0BD7 0C00-0C03 0C3E-0C44 "
    "0C46-0C48 0C4A-0C4D 0C55-0C56 0C62-0C63 0C81-0C83 0CBC 0CBE-0CC4 0CC6-0CC8 "
    "0CCA-0CCD 0CD5-0CD6 0CE2-0CE3 0D01-0D03 0D3E-0D44 0D46-0D48 0D4A-0D4D 0D57 "
    "0D62-0D63 0D82-0D83 0DCA 0DCF-0DD4 0DD6 0DD8-0DDF 0DF2-0DF3 0E31 "
    "0E34-0E3A 0E47-0E4E 0EB1 0EB4-0EB9 0EBB-0EBC 0EC8-0ECD 0F18-0F19 0F35 "
    "0F37 0F39 0F3E-0F3F 0F71-0F84 0F86-0F87 0F8D-0F97 0F99-0FBC 0FC6 "
    "102B-103E 1056-1059 105E-1060 1062-1064 1067-106D 1071-1074 1082-108D 108F "
    "109A-109D 135D-135F 1712-1714 1732-1734 1752-1753 1772-1773 17B4-17D3 17DD "
    "180B-180D 1885-1886 18A9 1920-192B 1930-193B 1A17-1A1B 1A55-1A5E 1A60-1A7C "
    "1A7F 1AB0-1ABE 1B00-1B04 1B34-1B44 1B6B-1B73 1B80-1B82 1BA1-1BAD 1BE6-1BF3 "
    "1C24-1C37 1CD0-1CD2 1CD4-1CE8 1CED 1CF2-1CF4 1CF8-1CF9 1DC0-1DF5 1DFB-1DFF "
    "20D0-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302F 3099-309A A66F-A672 A674-A67D "
    "A69E-A69F A6F0-A6F1 A802 A806 A80B A823-A827 A880-A881 A8B4-A8C5 "
    "A8E0-A8F1 A926-A92D A947-A953 A980-A983 A9B3-A9C0 A9E5 AA29-AA36 AA43 "
    "AA4C-AA4D AA7B-AA7D AAB0 AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEB-AAEF "
    "AAF5-AAF6 ABE3-ABEA ABEC-ABED FB1E FE00-FE0F FE20-FE2F 101FD 102E0 "
    "10376-1037A 10A01-10A03 10A05-10A06 10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 11000-11002 "
    "11038-11046 1107F-11082 110B0-110BA 11100-11102 11127-11134 11173 11180-11182 111B3-111C0 "
    "111CA-111CC 1122C-11237 1123E 112DF-112EA 11300-11303 1133C 1133E-11344 11347-11348 "
    "1134B-1134D 11357 11362-11363 11366-1136C 11370-11374 11435-11446 114B0-114C3 115AF-115B5 "
    "115B8-115C0 115DC-115DD 11630-11640 116AB-116B7 1171D-1172B 11C2F-11C36 11C38-11C3F 11C92-11CA7 "
    "11CA9-11CB6 16AF0-16AF4 16B30-16B36 16F51-16F7E 16F8F-16F92 1BC9D-1BC9E 1D165-1D169 1D16D-1D172 "
    "1D17B-1D182 1D185-1D18B 1D1AA-1D1AD 1D242-1D244 1DA00-1DA36 1DA3B-1DA6C 1DA75 1DA84 "
    "1DA9B-1DA9F 1DAA1-1DAAF 1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A 1E8D0-1E8D6 "
    "1E944-1E94A E0100-E01EF "
)
BERT_PUNCTUATION = CharTable(
    "00A1 00A7 00AB 00B6-00B7 00BB 00BF 037E 0387 "
    "055A-055F 0589-058A 05BE 05C0 05C3 05C6 05F3-05F4 0609-060A "
    "060C-060D 061B 061E-061F 066A-066D 06D4 0700-070D 07F7-07F9 0830-083E "
    "085E 0964-0965 0970 0AF0 0DF4 0E4F 0E5A-0E5B 0F04-0F12 "
    "0F14 0F3A-0F3D 0F85 0FD0-0FD4 0FD9-0FDA 104A-104F 10FB 1360-1368 "
    "1400 166D-166E 169B-169C 16EB-16ED 1735-1736 17D4-17D6 17D8-17DA 1800-180A "
    "1944-1945 1A1E-1A1F 1AA0-1AA6 1AA8-1AAD 1B5A-1B60 1BFC-1BFF 1C3B-1C3F 1C7E-1C7F "
    "1CC0-1CC7 1CD3 2010-2027 2030-2043 2045-2051 2053-205E 207D-207E 208D-208E "
    "2308-230B 2329-232A 2768-2775 27C5-27C6 27E6-27EF 2983-2998 29D8-29DB 29FC-29FD "
    "2CF9-2CFC 2CFE-2CFF 2D70 2E00-2E2E 2E30-2E42 3001-3003 3008-3011 3014-301F "
    "3030 303D 30A0 30FB A4FE-A4FF A60D-A60F A673 A67E "
    "A6F2-A6F7 A874-A877 A8CE-A8CF A8F8-A8FA A8FC A92E-A92F A95F A9C1-A9CD "
    "A9DE-A9DF AA5C-AA5F AADE-AADF AAF0-AAF1 ABEB FD3E-FD3F FE10-FE19 FE30-FE52 "
    "FE54-FE61 FE63 FE68 FE6A-FE6B FF01-FF03 FF05-FF0A FF0C-FF0F FF1A-FF1B "
    "FF1F-FF20 FF3B-FF3D FF3F FF5B FF5D FF5F-FF65 10100-10102 1039F "
    "103D0 1056F 10857 1091F 1093F 10A50-10A58 10A7F 10AF0-10AF6 "
    "10B39-10B3F 10B99-10B9C 11047-1104D 110BB-110BC 110BE-110C1 11140-11143 11174-11175 111C5-111C9 "
    "111CD 111DB 111DD-111DF 11238-1123D 112A9 114C6 115C1-115D7 11641-11643 "
    "1173C-1173E 12470-12474 16A6E-16A6F 16AF5 16B37-16B3B 16B44 1BC9F 1DA87-1DA8B "
)

# Rust's char::is_whitespace: the White_Space property (unchanged since Unicode 6.3)
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

# BertNormalizer's CJK ranges (tokenizers' normalizers/bert.rs)
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def is_white_space(c: str) -> bool:
    return c in WHITE_SPACE


def is_nonspacing_mark(c: str) -> bool:
    return c >= "\u0300" and c in BERT_NONSPACING_MARK


def is_mark(c: str) -> bool:
    """A combining mark as the StripAccents normalizer sees it."""
    return c >= "\u0300" and c in STRIP_ACCENTS_MARK


def is_chinese_char(c: str) -> bool:
    o = ord(c)
    return o >= 0x3400 and any(a <= o <= b for a, b in CJK_RANGES)


def bert_clean(c: str) -> str:
    """BertNormalizer's clean_text for one character: removed (""), a space, or kept."""
    if c in "\t\n\r":
        return " "
    if c == "\x00" or c == "\ufffd" or c in BERT_OTHER:
        return ""
    return " " if c in WHITE_SPACE else c


def is_bert_punctuation(c: str) -> bool:
    """BertPreTokenizer's punctuation: ASCII punctuation or category P (Unicode 8.0)."""
    if c < "\x80":
        o = ord(c)
        return 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126
    return c in BERT_PUNCTUATION


# -- split patterns as tiktoken's Rust regex reads them ---------------------------------------------

_NEW17_CLASS = NEW_IN_UNICODE_17.regex_class()


def pin_pattern(pattern: str) -> str:
    """Rewrite `pattern` so its Unicode property classes ignore `NEW_IN_UNICODE_17`.

    ``\\p{L}`` becomes ``(?:(?!NEW)\\p{L})``, a class with properties ``[..\\p{L}..]`` becomes
    ``(?:(?!NEW)[...])`` and a negated one ``(?:NEW|[^...])``. Slower than the original, so it is
    only used for texts that hold such characters (`PinnedPattern`).
    """
    out = []
    i, n = 0, len(pattern)
    new = _NEW17_CLASS
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            if pattern[i + 1] in "pP" and i + 2 < n and pattern[i + 2] == "{":
                j = pattern.index("}", i) + 1
                prop = pattern[i:j]
                out.append(f"(?:(?!{new}){prop})" if pattern[i + 1] == "p" else f"(?:{new}|{prop})")
                i = j
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            cls = pattern[i : j + 1]
            if "\\p{" in cls or "\\P{" in cls:
                cls = f"(?:{new}|{cls})" if cls.startswith("[^") else f"(?:(?!{new}){cls})"
            out.append(cls)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


class PinnedPattern:
    """A compiled split pattern that matches like tiktoken's: the fast `regex` pattern for texts
    without `NEW_IN_UNICODE_17` characters, the pinned one (`pin_pattern`) for the others.

    Patterns come from files: every match runs with a time limit (`tokviz.core.text.pattern_limits`),
    and Python's `re` (which has none) only runs `trusted` patterns (tokviz's own).
    """

    def __init__(self, pattern: str, *, literal: str | None = None, trusted: bool = False) -> None:
        self.pattern = pattern
        self.literal = literal  # the text of a plain-string pattern
        self.trusted = trusted or literal is not None
        self.fast = regex.compile(pattern)
        self._exact: regex.Pattern | None = None
        self._needs = "\\p{" in pattern or "\\P{" in pattern
        self._splits: dict[str | bool, re.Pattern | regex.Pattern | None] = {}  # for `isolated`

    @property
    def exact(self) -> regex.Pattern:
        if self._exact is None:
            self._exact = regex.compile(pin_pattern(self.pattern))
        return self._exact

    def for_text(self, text: str) -> regex.Pattern:
        """The compiled pattern for `text` (run it with ``timeout=time_limit(len(text))``)."""
        if not self._needs or text.isascii() or not _has_new17(text):
            return self.fast
        return self.exact

    def findall(self, text: str, *, concurrent: bool | None = None) -> list[str]:
        limit = time_limit(len(text))
        try:  # (not `limited`: a context manager costs a microsecond, and this runs per line and word)
            return self.for_text(text).findall(text, concurrent=concurrent, timeout=limit)
        except TimeoutError:
            raise timeout_error(self.pattern, limit, len(text)) from None

    def finditer(self, text: str, *, concurrent: bool | None = None):
        limit = time_limit(len(text))
        return limited_iter(self.for_text(text).finditer(text, concurrent=concurrent, timeout=limit),
                            self.pattern, limit, len(text))

    def isolated(self, text: str) -> list[str]:
        """The non-empty matches and the non-empty text between them, in order (HF's
        ``isolated`` split), cut by one ``split`` over the pattern as a group (the matches
        ``finditer`` finds, empty ones giving empty pieces)."""
        pattern = self.for_text(text)
        key = "ascii" if text.isascii() and self.trusted else pattern is not self.fast
        split = self._splits.get(key, False)
        if split is False:
            split = self._splits[key] = self._split_pattern(key)
        if split is not None:
            if key == "ascii":  # Python's re: no timeout, only for trusted patterns
                return list(filter(None, split.split(text)))
            limit = time_limit(len(text))
            try:  # (see `findall`)
                return list(filter(None, split.split(text, timeout=limit)))
            except TimeoutError:
                raise timeout_error(self.pattern, limit, len(text)) from None
        out, prev = [], 0
        for m in self.finditer(text):
            a, b = m.span()
            out.append(text[prev:a])
            out.append(text[a:b])
            prev = b
        out.append(text[prev:])
        return list(filter(None, out))

    def _split_pattern(self, key: str | bool):
        """The pattern as one group (for `isolated`): for ASCII text (`ascii_pattern`, Python's
        `re`), the pinned one (True) or the fast one (False); None when it has groups of its own."""
        if self.fast.groups:
            return None
        if key == "ascii":
            from .ascii_pattern import ascii_pattern

            plain = ascii_pattern(self.pattern)
            return re.compile(f"({plain})") if plain is not None else self._split_pattern(False)
        return regex.compile(f"({(self.exact if key else self.fast).pattern})")

    def sub(self, repl, text: str) -> str:
        limit = time_limit(len(text))
        with limited(self.pattern, limit, len(text)):
            return self.for_text(text).sub(repl, text, timeout=limit)

    @classmethod
    def of_literal(cls, text: str) -> "PinnedPattern":
        return cls(regex.escape(text), literal=text)


# Python's re, a plain class: scanned much faster than by `regex`; the BMP part compiles to a bitmap
# (~10 ns a character), a class with astral ranges to a list of ranges tried one by one (~20x slower)
_NEW17_BMP = re.compile(NEW_IN_UNICODE_17.regex_class(high=0xFFFF))
_NEW17_ASTRAL = re.compile(NEW_IN_UNICODE_17.regex_class(low=0x10000))
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _has_new17(text: str) -> bool:
    """Does `text` hold a character of `NEW_IN_UNICODE_17`? (the astral class only when the text
    has astral characters at all)"""
    if _NEW17_BMP.search(text) is not None:
        return True
    return _ASTRAL.search(text) is not None and _NEW17_ASTRAL.search(text) is not None
