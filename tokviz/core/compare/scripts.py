"""The Unicode script of characters and the dominant script of a text (`regex`'s ``\\p{Script=}``).

A text's dominant script is the script most of its letters belong to; characters of the scripts
Common (spaces, digits, punctuation) and Inherited (combining marks) do not count, so
"1948: Ελλάδα" is Greek. A text with no letters of any script is "Common".

Each distinct character is classified once, by one alternation of ``\\p{Script=...}`` tests
(the scripts `regex` knows, most common first); counting uses numpy over code points, so 5 MB
of text takes well under a second. What this leaves out: script extensions, writing systems
that mix scripts (Japanese counts as Han, Hiragana or Katakana, whichever is most frequent).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import regex

COMMON = "Common"

# Unicode's long script names; common scripts first (the alternation tries them in order)
SCRIPT_NAMES = (
    "Latin", "Cyrillic", "Arabic", "Han", "Devanagari", "Greek", "Hangul", "Hiragana", "Katakana",
    "Hebrew", "Thai", "Bengali", "Tamil", "Telugu", "Kannada", "Malayalam", "Gujarati", "Gurmukhi",
    "Oriya", "Sinhala", "Georgian", "Armenian", "Ethiopic", "Tibetan", "Myanmar", "Khmer", "Lao",
    "Mongolian", "Thaana", "Syriac", "Canadian_Aboriginal", "Cherokee", "Tifinagh", "Vai", "Yi",
    "Nko", "Ol_Chiki", "Bopomofo", "Javanese", "Balinese", "Sundanese", "Buginese", "Tagalog",
    "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Avestan", "Bamum", "Bassa_Vah", "Batak",
    "Bhaiksuki", "Brahmi", "Braille", "Buhid", "Carian", "Caucasian_Albanian", "Chakma", "Cham",
    "Chorasmian", "Coptic", "Cuneiform", "Cypriot", "Cypro_Minoan", "Deseret", "Dives_Akuru",
    "Dogra", "Duployan", "Egyptian_Hieroglyphs", "Elbasan", "Elymaic", "Garay", "Glagolitic",
    "Gothic", "Grantha", "Gunjala_Gondi", "Gurung_Khema", "Hanifi_Rohingya", "Hanunoo", "Hatran",
    "Imperial_Aramaic", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Kaithi", "Kawi",
    "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khojki", "Khudawadi", "Kirat_Rai", "Lepcha",
    "Limbu", "Linear_A", "Linear_B", "Lisu", "Lycian", "Lydian", "Mahajani", "Makasar", "Mandaic",
    "Manichaean", "Marchen", "Masaram_Gondi", "Medefaidrin", "Meetei_Mayek", "Mende_Kikakui",
    "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Modi", "Mro", "Multani", "Nabataean",
    "Nag_Mundari", "Nandinagari", "New_Tai_Lue", "Newa", "Nushu", "Nyiakeng_Puachue_Hmong",
    "Ogham", "Ol_Onal", "Old_Hungarian", "Old_Italic", "Old_North_Arabian", "Old_Permic",
    "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Old_Uyghur", "Osage",
    "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician",
    "Psalter_Pahlavi", "Rejang", "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian",
    "Siddham", "SignWriting", "Sogdian", "Sora_Sompeng", "Soyombo", "Sunuwar", "Syloti_Nagri",
    "Tagbanwa", "Tai_Le", "Tai_Tham", "Tai_Viet", "Takri", "Tangsa", "Tangut", "Tirhuta",
    "Todhri", "Toto", "Tulu_Tigalari", "Ugaritic", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi",
    "Zanabazar_Square",
)


@cache
def _classifier() -> tuple[regex.Pattern, tuple[str, ...]]:
    """One alternation with a group per script the installed `regex` knows."""
    known = []
    for name in SCRIPT_NAMES:
        try:
            regex.compile(rf"\p{{Script={name}}}")
        except regex.error:  # a script newer than this regex's Unicode tables
            continue
        known.append(name)
    pattern = regex.compile("|".join(rf"(\p{{Script={n}}})" for n in known))
    return pattern, tuple(known)


def scripts_of(chars: str) -> list[str]:
    """The script of each character; Common for characters of no listed script.

    >>> scripts_of("aЖ1ά字")
    ['Latin', 'Cyrillic', 'Common', 'Greek', 'Han']
    """
    pattern, names = _classifier()
    out = [COMMON] * len(chars)
    for m in pattern.finditer(chars):
        out[m.start()] = names[m.lastindex - 1]
    return out


class ScriptCounter:
    """Dominant scripts of many parts of one text, classifying each distinct character once."""

    def __init__(self) -> None:
        self._script: dict[int, str] = {}  # code point -> script

    def dominant(self, text: str) -> str:
        """The script most letters of `text` belong to (ties: the first in `SCRIPT_NAMES`).

        >>> ScriptCounter().dominant("1948: Ελλάδα and x")
        'Greek'
        >>> ScriptCounter().dominant("12 + 3!")
        'Common'
        """
        return self.dominant_of(self.tally(text))

    def tally(self, text: str, counts: dict[int, int] | None = None) -> dict[int, int]:
        """`counts` (code point -> occurrences; a new dict when None) with the characters of
        `text` added: the parts of a text read in pieces add up to the whole."""
        counts = {} if counts is None else counts
        if text:
            cps = np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
            codes, found = np.unique(cps, return_counts=True)
            for c, n in zip(codes.tolist(), found.tolist()):
                counts[c] = counts.get(c, 0) + n
        return counts

    def dominant_of(self, counts: dict[int, int]) -> str:
        """The dominant script of a text whose characters occur `counts` times (`tally`)."""
        new = [c for c in counts if c not in self._script]
        if new:
            found = scripts_of("".join(map(chr, new)))
            self._script.update(zip(new, found))
        totals: dict[str, int] = {}
        for c, n in counts.items():
            s = self._script[c]
            if s != COMMON:
                totals[s] = totals.get(s, 0) + n
        if not totals:
            return COMMON
        order = {name: i for i, name in enumerate(SCRIPT_NAMES)}
        return max(totals, key=lambda s: (totals[s], -order[s]))
