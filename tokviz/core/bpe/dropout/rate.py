"""The dropout rate and the random generator every dropout loop draws from."""

from __future__ import annotations

import math
import random

from tokviz.core.errors import EncodeError


def check_rate(p: object) -> float:
    """`p` as a float in [0, 1], or an `EncodeError` saying what is allowed."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise EncodeError(f"dropout must be a number from 0 to 1, not {p!r}")
    return float(p)


def make_rng(seed: int | random.Random | None) -> random.Random:
    """The generator a sampled encode draws from: `seed` itself when it is one, else a new one
    seeded with it (None: seeded from the system)."""
    return seed if isinstance(seed, random.Random) else random.Random(seed)
