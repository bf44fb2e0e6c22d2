"""Time limits for regular expressions that come from files or users.

A split or replace pattern in a ``tokenizer.json``, a tiktoken sidecar or a training setting is
a program someone else wrote: ``(a|aa)+$`` takes minutes on 41 characters. Every such pattern
runs with the `regex` module's ``timeout=`` (counted while matching only, not while the caller
works between matches), and running out is a `PatternTimeout` naming the pattern and the limit.

The limit grows with the text: `BASE_SECONDS` plus `SECONDS_PER_CHAR` per character, for each
call (a whole text, or one piece of it between added tokens). Real patterns run at most about
0.7 microseconds a character (measured: the GPT-2, cl100k, o200k and DeepSeek V3 patterns, their
pinned Unicode 16 forms included, over 10 MB of multilingual text): 7 times less than the limit
allows, and a short text gets two seconds where it needs a millisecond. A catastrophic pattern
stops within about twice its limit (the module looks at the clock now and then).

What this leaves out: compiling the patterns (`tokviz.core.text.unicode_tables.PinnedPattern`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tokviz.core.errors import PatternTimeout

BASE_SECONDS = 2.0
SECONDS_PER_CHAR = 5e-6
_SHOWN = 80  # characters of a pattern the message shows


def time_limit(n_chars: int) -> float:
    """Seconds a pattern may match for on a text of `n_chars` characters.

    >>> time_limit(0), round(time_limit(10_000_000), 6)
    (2.0, 52.0)
    """
    return BASE_SECONDS + SECONDS_PER_CHAR * n_chars


def timeout_error(pattern: str, limit: float, n_chars: int) -> PatternTimeout:
    """The one-line error for `pattern` running out of `limit` seconds."""
    shown = pattern if len(pattern) <= _SHOWN else pattern[:_SHOWN] + "..."
    return PatternTimeout(
        f"the regular expression {shown!r} ran past its time limit of {limit:.1f} s on a text of "
        f"{n_chars:,} characters (it backtracks catastrophically); fix or remove the pattern"
    )


@contextmanager
def limited(pattern: str, limit: float, n_chars: int) -> Iterator[None]:
    """Turn the `regex` module's ``TimeoutError`` inside into `timeout_error`."""
    try:
        yield
    except TimeoutError:
        raise timeout_error(pattern, limit, n_chars) from None


def limited_iter(matches: Iterator, pattern: str, limit: float, n_chars: int) -> Iterator:
    """`matches` (a ``finditer`` started with ``timeout=limit``), its timeout a `PatternTimeout`."""
    with limited(pattern, limit, n_chars):
        yield from matches
