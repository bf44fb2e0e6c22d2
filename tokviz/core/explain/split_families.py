"""The families of split regexes tokviz knows, and how each cuts a text (its reference chunking).

A family is one way of pre-tokenizing: the regexes of llama.cpp's pre-tokenizer types
(`tokviz.core.formats.gguf.pre_types`, grouped by their regexes) and tiktoken's patterns
(`tokviz.core.text.split.SPLIT_PRESETS`: GPT-2, cl100k, o200k; tokenizers' ByteLevel). Nothing here is a stored
answer: a family's chunking of a text is worked out by running its own regexes, so a new
pre-tokenizer type added to `pre_types` becomes a family by itself. Families that cut
`CHECK_TEXT` alike are one behaviour (`behaviours`): cl100k and Llama 3 share their regex in
all but spelling, so they are named together.

What this leaves out: naming a tokenizer's family (`fingerprints`), splits that are not regexes
(BERT's, SentencePiece's ``▁`` words), which `fingerprints` recognises by their own marks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tokviz.core.formats.gguf.pre_types import PRE_TYPES
from tokviz.core.text.fastsplit import HF_GPT2_PATTERN
from tokviz.core.text.split import SPLIT_PRESETS, python_regex_pattern
from tokviz.core.text.token_text import python_pattern
from tokviz.core.text.unicode_tables import PinnedPattern

# A text on which the families differ: contractions in both cases, camel case, digit runs of
# every length and script, CJK with Latin and digits inside, combining marks, whitespace runs
# before words, at line ends and at the end, code with slashes, emoji sequences, punctuation runs.
CHECK_TEXT = (
    "Hello world! I'VE been 'told he's there; we'Re sure, aren't we? 'M not; 'd it?\n"
    "'tis O'Neil's rock'n'roll ('twas)\n"
    "eBay NaOH pH iPhone McDonald's HTTPServer snake_case camelCase\n"
    "1 12 123 1234 12345 1234567 3.14159 2024-06-01 ٣٤٥٦ १२३४ ①②\n"
    "日本語のテキスト カタカナ 我想在apple工作1314151天 한국어 텍스트\n"
    "naïve cafe\u0301 Ελληνικά Русский עברית العربية हिन्दी ไทย\n"
    "   leading\tand\t\ttabs   \n\n\n  \r\n\r\nx\n"
    "code: x+=1; y->z // note /* c */ https://example.com/a/b?c=d&e=f (\"q\") [i] {k}\n"
    "emoji 🚀 😶\u200d🌫\ufe0f 🦙🦙 ✅ ……!!!??? ''''``` \"\"\"...---=== ~~\n"
    "end   "
)
# a display name for the llama.cpp pre-tokenizer type that stands for each family
_NAMES = {
    "gpt-2": "GPT-2", "llama-bpe": "Llama 3", "gpt-4o": "o200k (GPT-4o, Llama 4)", "qwen2": "Qwen 2/3",
    "qwen35": "Qwen 3.5", "deepseek-v3": "DeepSeek V3", "deepseek-llm": "DeepSeek LLM",
    "deepseek-coder": "DeepSeek Coder", "tekken": "Mistral Tekken", "default": "llama.cpp default",
    "starcoder": "StarCoder", "falcon": "Falcon", "poro-chat": "BLOOM",
}
_TIKTOKEN_NAMES = {"gpt2": "GPT-2", "gpt4": "cl100k", "o200k": "o200k (GPT-4o, Llama 4)"}


@dataclass(frozen=True)
class SplitFamily:
    """A split: `regexes` run one after another, each cutting the pieces the previous one left
    into its matches and the text between them; `pre_types` are llama.cpp's names for it."""

    name: str
    regexes: tuple[str, ...]
    pre_types: tuple[str, ...] = ()

    def chunks(self, text: str) -> list[str]:
        """`text` cut as this family cuts it.

        >>> family_named("Qwen 2/3").chunks("ab 123")
        ['ab', ' ', '1', '2', '3']
        """
        pieces = [text] if text else []
        for pattern in _compiled(self.regexes):
            pieces = [w for p in pieces for w in pattern.isolated(p)]
        return pieces

    def matches(self, regexes: tuple[str, ...]) -> bool:
        """Are `regexes` this family's, in any of the spellings tokviz runs them in?"""
        return len(regexes) == len(self.regexes) and all(
            r in _spellings(own) for r, own in zip(regexes, self.regexes))


@cache
def _compiled(regexes: tuple[str, ...]) -> tuple[PinnedPattern, ...]:
    return tuple(PinnedPattern(python_pattern(r), trusted=True) for r in regexes)


@cache
def _spellings(regex: str) -> frozenset[str]:
    return frozenset({regex, python_regex_pattern(regex), python_pattern(regex)})


@cache
def split_families() -> tuple[SplitFamily, ...]:
    """Every family: llama.cpp's pre-tokenizer types grouped by their regexes, then tiktoken's
    patterns (named as the type they equal where one does)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, kind in PRE_TYPES.items():
        if kind.supported:
            groups.setdefault(kind.regexes, []).append(name)
    out = []
    for regexes, names in groups.items():
        named = [n for n in names if n in _NAMES]
        out.append(SplitFamily(_NAMES[named[0]] if named else f"llama.cpp {names[0]!r}", regexes, tuple(names)))
    for preset, name in _TIKTOKEN_NAMES.items():
        out.append(SplitFamily(name, (SPLIT_PRESETS[preset],)))  # type: ignore[arg-type]
    out.append(SplitFamily("GPT-2", (HF_GPT2_PATTERN,)))  # tokenizers' ByteLevel spelling
    return tuple(out)


def family_named(name: str) -> SplitFamily:
    """The first family called `name` (``"Llama 3"``); KeyError for none."""
    for f in split_families():
        if f.name == name:
            return f
    raise KeyError(name)


def family_of_pre_type(pre: str | None) -> SplitFamily | None:
    """The family of llama.cpp's pre-tokenizer type `pre` (none declared: ``default``)."""
    pre = pre or "default"
    return next((f for f in split_families() if pre in f.pre_types), None)


@cache
def behaviours() -> dict[tuple[str, ...], str]:
    """The chunking of `CHECK_TEXT` -> the names of the families that cut it so (``"Llama 3 =
    cl100k"``): one entry per behaviour the check text tells apart."""
    names: dict[tuple[str, ...], list[str]] = {}
    for f in split_families():
        found = names.setdefault(tuple(f.chunks(CHECK_TEXT)), [])
        if f.name not in found:
            found.append(f.name)
    return {chunks: _joined(found) for chunks, found in names.items()}


def _joined(names: list[str]) -> str:
    """``"Llama 3 = cl100k (also llama.cpp 'minicpm5')"``: the named families first."""
    named = [n for n in names if not n.startswith("llama.cpp '")]
    others = [n for n in names if n not in named]
    if not named or not others:
        return " = ".join(names)
    return " = ".join(named) + " (also " + ", ".join(others) + ")"


def behaviour_name(chunks: list[str] | tuple[str, ...]) -> str | None:
    """The family name of a chunking of `CHECK_TEXT`, or None when no known family cuts it so."""
    return behaviours().get(tuple(chunks))
