"""The one place that lists the kinds of positional encoding and maps a kind's key to its object.

Everything else works through the `PositionalEncoding` protocol (`positional_encoding`): an
encoding says which views it offers, which controls it reads and how its cells read. Code that
starts from a *key* (a lesson file's ``"kind"``, a request, the kind box's data) asks `encoding`.

    >>> [e.label for e in ENCODINGS]
    ['Sinusoidal', 'Learned (random init)', 'RoPE', 'ALiBi', 'Learned (trained)']
    >>> KINDS
    ('sinusoidal', 'learned', 'rope', 'alibi')
    >>> encoding("rope").views
    ('matrix', 'similarity', 'distance', 'dims')

What this leaves out: the kinds themselves (`sinusoidal`, `learned`, `rope`, `alibi` in this package).
"""

from __future__ import annotations

from tokviz.core.errors import SettingsError

from .alibi import ALiBiEncoding
from .learned import LearnedEncoding, TrainedEncoding
from .positional_encoding import PositionalEncoding
from .rope import RoPEEncoding
from .sinusoidal import SinusoidalEncoding

SINUSOIDAL = SinusoidalEncoding()
LEARNED = LearnedEncoding()
ROPE = RoPEEncoding()
ALIBI = ALiBiEncoding()
TRAINED = TrainedEncoding()  # without a table; `TRAINED.with_table(t)` shows t
ENCODINGS: tuple[PositionalEncoding, ...] = (SINUSOIDAL, LEARNED, ROPE, ALIBI, TRAINED)  # menu order
KINDS = tuple(e.key for e in ENCODINGS if not e.needs_table)  # computed from the controls alone
_BY_KEY = {e.key: e for e in ENCODINGS}


def encoding(key: object) -> PositionalEncoding:
    """The encoding of kind `key`, or `SettingsError` listing the kinds.

    >>> encoding("alibi").label
    'ALiBi'
    >>> encoding("fourier")
    Traceback (most recent call last):
    ...
    tokviz.core.errors.SettingsError: unknown positional encoding 'fourier'; choose one of sinusoidal, learned, rope, alibi, trained
    """
    found = _BY_KEY.get(key) if isinstance(key, str) else None
    if found is None:
        raise SettingsError(f"unknown positional encoding {key!r}; choose one of {', '.join(_BY_KEY)}")
    return found
