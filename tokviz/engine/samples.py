"""The built-in sample corpora (``resources/corpora``, installed as ``tokviz.resources``).

Each sample has a stable key (used by scripts, tests and the screenshot command), a menu title, a
one-line description, and whether it is a ``word count`` table.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files


@dataclass(frozen=True)
class Sample:
    key: str
    title: str
    filename: str
    description: str
    word_counts: bool = False

    def read(self) -> str:
        return (files("tokviz.resources") / "corpora" / self.filename).read_text(encoding="utf-8")


SAMPLES: tuple[Sample, ...] = (
    Sample("low-lower-lowest", "low / lower / lowest", "low_lower_lowest.txt",
           "The toy corpus of the BPE papers: watch 'est' and 'low' become tokens."),
    Sample("cat-sat", "The cat sat on the mat", "cat_sat.txt",
           "A few short sentences with lots of repeated words."),
    Sample("word-frequencies", "Word-frequency table", "word_frequencies.txt",
           "Sennrich et al.'s table: low 5, lower 2, newest 6, widest 3.", word_counts=True),
    Sample("english-prose", "English prose (Alice, chapter I)", "english_prose.txt",
           "About 12 KB of public-domain English prose."),
    Sample("multilingual", "Multilingual text with emoji", "multilingual.txt",
           "One sentence in 14 languages and scripts, plus emoji: see bytes vs characters."),
)
SAMPLES_BY_KEY = {s.key: s for s in SAMPLES}


def sample(key: str) -> Sample:
    """The sample with `key`; `KeyError` lists the valid keys."""
    try:
        return SAMPLES_BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown sample {key!r}; choose one of {', '.join(SAMPLES_BY_KEY)}") from None
