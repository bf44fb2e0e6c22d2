"""How many words a text will bring that its encoder has not seen, estimated from a few slices of it.

Importing numba and loading a compiled merge loop costs a fixed 0.35-0.5 s; an encoder loads it
before a long text only when the text repays it. `new_word_density(text, known)` is the number of
distinct words (letters between spaces) in a few slices of the text that are not tokens (`known`),
per sampled character: English 0.004-0.012 (its common words are tokens, its rare ones repeat),
udhr2's 380 languages 0.035-0.048. `repays_loading` asks for many per character (not one
language's repeated words) and many over the whole text.
"""

from __future__ import annotations

from collections.abc import Callable

SAMPLES = 16  # slices of a big text looked at
SAMPLE_CHARS = 4096
EXPECTED_MIN = 100_000  # new words a whole text is expected to bring before compiled code is loaded for it
DENSITY_MIN = 0.015  # ... and new words per character in its samples


def new_word_density(text: str, known: Callable[[str], bool]) -> float:
    """New words per character in `SAMPLES` slices of `text`: the distinct words of letters for
    which `known` (the word as the tokenizer sees it: after its space, or its ``▁``) is false.

    >>> new_word_density("aa bb aa cc 12", lambda w: w == "aa")
    0.14285714285714285
    """
    step = max(len(text) // SAMPLES, SAMPLE_CHARS)
    seen: set[str] = set()
    sampled = 0
    for a in range(0, len(text), step):
        part = text[a : a + SAMPLE_CHARS]
        sampled += len(part)
        seen.update(part.split())
    return sum(1 for w in seen if w.isalpha() and not known(w)) / max(sampled, 1)


def repays_loading(density: float, n_chars: int, *, expected_min: int = EXPECTED_MIN,
                   density_min: float = DENSITY_MIN) -> bool:
    """Whether a text of `n_chars` characters whose samples found `density` new words per
    character will bring enough of them to repay loading compiled code.

    >>> repays_loading(0.04, 5_000_000), repays_loading(0.01, 30_000_000), repays_loading(0.04, 1_000_000)
    (True, False, False)
    """
    return density >= density_min and density * n_chars >= expected_min
