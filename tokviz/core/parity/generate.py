"""Generated test text for finding where two tokenizers disagree: the kinds of text that split
pipelines apart, seeded so a run can be repeated.

`fuzz_inputs(n, seed=..., specials=..., words=...)` yields ``(kind, text)`` pairs, taking the
kinds in turn so each gets tried early:

- ``script``: words in one Unicode script (Latin, Greek, Cyrillic, Arabic, Devanagari, Thai,
  Hangul, CJK, emoji, combining marks, ...);
- ``whitespace``: runs of spaces, tabs, newlines, ``\\r\\n``, no-break and ideographic spaces
  between, before and after words;
- ``digits``: numbers of 1 to 12 digits, with separators, and non-ASCII digits;
- ``punctuation``: runs of punctuation, English contractions (``'s``, ``n't``, ``'LL``), quotes;
- ``special``: the tokenizers' special-token strings among words, with and without spaces;
- ``mixed``: fragments of the kinds above run together with no separator;
- ``random``: llama.cpp's random-test style: words of the vocabularies and random characters
  joined by random separators.

What this leaves out: checking the text against tokenizers (`tokviz.core.parity.search`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

KINDS = ("script", "whitespace", "digits", "punctuation", "special", "mixed", "random")

# (name, code point ranges) of scripts: each range a run of assigned letters or symbols
SCRIPTS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("latin", ((0x41, 0x5A), (0x61, 0x7A))),
    ("latin-1", ((0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0xFF))),
    ("latin-extended", ((0x100, 0x17F), (0x1E00, 0x1EFF))),
    ("greek", ((0x391, 0x3A9), (0x3B1, 0x3C9))),
    ("cyrillic", ((0x410, 0x44F),)),
    ("armenian", ((0x531, 0x556),)),
    ("hebrew", ((0x5D0, 0x5EA),)),
    ("arabic", ((0x621, 0x64A),)),
    ("devanagari", ((0x905, 0x939), (0x93E, 0x94D))),
    ("bengali", ((0x985, 0x9B9),)),
    ("thai", ((0xE01, 0xE30),)),
    ("georgian", ((0x10D0, 0x10FA),)),
    ("hangul", ((0xAC00, 0xD7A3),)),
    ("hiragana", ((0x3041, 0x3096),)),
    ("katakana", ((0x30A1, 0x30FA),)),
    ("cjk", ((0x4E00, 0x9FFF),)),
    ("emoji", ((0x1F300, 0x1F5FF), (0x1F600, 0x1F64F), (0x1F900, 0x1F9FF))),
    ("combining", ((0x61, 0x7A), (0x300, 0x36F))),
    ("math", ((0x2200, 0x22FF), (0x1D400, 0x1D433))),
    ("fullwidth", ((0xFF21, 0xFF3A), (0xFF41, 0xFF5A))),
)
WHITESPACE = (" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\u00a0", "\u3000", "\u2009", "\u200b", "\x0b")
DIGIT_SETS = ("0123456789", "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９")
NUMBER_SEPARATORS = ("", "", ",", ".", " ", "_", "-")
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~…–—«»“”‘’¡¿·•"
CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "n't", "'S", "'LL", "'RE", "’s", "''", "'")
ASCII_WORDS = ("the", "Hello", "world", "a", "I", "tokenizer", "don", "we", "x", "HTTP", "naïve", "café")
RANDOM_CHARS = ("abcxyzABCXYZ0123456789 \t\n.,!?'\"-_éüñçßøåœ"
                "漢字かなカナ한국어ابجдждΩλ🙂👋\u00a0\u200d\u0301")


def _letter(rng: random.Random, ranges: Sequence[tuple[int, int]]) -> str:
    lo, hi = rng.choice(ranges)
    return chr(rng.randint(lo, hi))


def script_text(rng: random.Random) -> str:
    """A few words of one script (a combining script alternates letters and marks)."""
    name, ranges = rng.choice(SCRIPTS)
    words = []
    for _ in range(rng.randint(1, 4)):
        if name == "combining":
            word = "".join(_letter(rng, ranges[:1]) + _letter(rng, ranges[1:]) * rng.randint(0, 2)
                           for _ in range(rng.randint(1, 4)))
        else:
            word = "".join(_letter(rng, ranges) for _ in range(rng.randint(1, 8)))
        words.append(word)
    return " ".join(words)


def whitespace_text(rng: random.Random) -> str:
    parts = [rng.choice(WHITESPACE) * rng.randint(1, 3) if rng.random() < 0.5 else ""]
    for _ in range(rng.randint(1, 3)):
        parts += [rng.choice(ASCII_WORDS), "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(1, 4)))]
    if rng.random() < 0.5:
        parts.pop()
    return "".join(parts)


def digits_text(rng: random.Random) -> str:
    digits = rng.choice(DIGIT_SETS) if rng.random() < 0.3 else DIGIT_SETS[0]
    number = "".join(rng.choice(digits) for _ in range(rng.randint(1, 12)))
    sep = rng.choice(NUMBER_SEPARATORS)
    if sep and len(number) > 3:
        cut = rng.randint(1, len(number) - 1)
        number = number[:cut] + sep + number[cut:]
    around = rng.choice(("", " ", "x", "$", "v", " (", "-"))
    return around + number + rng.choice(("", " ", "%", "th", "px", ")", "."))


def punctuation_text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        word = rng.choice(ASCII_WORDS)
        return rng.choice(("", " ")) + word + rng.choice(CONTRACTIONS) + rng.choice(("", " ", "!", "?"))
    return "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 6))) + rng.choice(("", " ", "a"))


def special_text(rng: random.Random, specials: Sequence[str]) -> str:
    if not specials:
        return punctuation_text(rng)
    parts = []
    for _ in range(rng.randint(1, 3)):
        parts += [rng.choice(("", " ", "\n")), rng.choice(specials), rng.choice(("", " ", "\n")),
                  rng.choice(ASCII_WORDS)]
    return "".join(parts)


def random_text(rng: random.Random, words: Sequence[str]) -> str:
    """llama.cpp's random tests: vocabulary words and random characters, random separators."""
    parts = []
    for _ in range(rng.randint(1, 6)):
        if words and rng.random() < 0.6:
            parts.append(rng.choice(words))
        else:
            parts.append("".join(rng.choice(RANDOM_CHARS) for _ in range(rng.randint(1, 5))))
        parts.append(rng.choice(("", "", " ", "  ", "\n", "\t")))
    return "".join(parts)


def fuzz_inputs(n: int, *, seed: int = 0, specials: Sequence[str] = (),
                words: Sequence[str] = ()) -> Iterator[tuple[str, str]]:
    """`n` generated ``(kind, text)`` pairs (see the module docstring); the same `seed`, special
    tokens and words give the same texts.

    >>> [kind for kind, _ in fuzz_inputs(8)]
    ['script', 'whitespace', 'digits', 'punctuation', 'special', 'mixed', 'random', 'script']
    >>> list(fuzz_inputs(3, seed=1)) == list(fuzz_inputs(3, seed=1))
    True
    """
    rng = random.Random(seed)
    single = {
        "script": script_text, "whitespace": whitespace_text, "digits": digits_text,
        "punctuation": punctuation_text,
        "special": lambda r: special_text(r, specials),
        "random": lambda r: random_text(r, words),
    }
    for k in range(n):
        kind = KINDS[k % len(KINDS)]
        if kind == "mixed":
            makers = [single[name] for name in ("script", "digits", "punctuation", "whitespace", "special")]
            text = "".join(rng.choice(makers)(rng) for _ in range(rng.randint(2, 4)))
        else:
            text = single[kind](rng)
        yield kind, text
