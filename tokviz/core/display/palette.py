"""Token colours: a stable colour per token id, neighbours always different, colour-blind safe.

Pure data and arithmetic (colours are ``"#rrggbb"`` strings), shared by every view that colours
tokens (token view, merge timeline, HTML export). A `TokenPalette` is a set of background colours
plus the text colour drawn on them; every palette comes in a light and a dark variant and keeps
the WCAG contrast between token text and background at 4.5:1 or more (7:1 for the projector
palette `high-contrast`).

Colour choice: token id ``t`` has a primary colour ``color_index(t, n)`` (a multiplicative hash,
the same in every run and every process) and an alternate one; `assign_colors` uses the alternate
only when the primary equals the previous token's colour, so neighbours always differ and a token
keeps its colour wherever its neighbour allows it.

What this leaves out: Qt colour objects and drawing (panels convert with ``QColor(hex)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Okabe & Ito (2008), the colour-blind-safe qualitative set; Paul Tol's "light" scheme.
OKABE_ITO = ("#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#999999")
TOL_LIGHT = ("#77aadd", "#99ddff", "#44bb99", "#bbcc33", "#aaaa00", "#eedd88", "#ee8866", "#ffaabb", "#dddddd")


@dataclass(frozen=True)
class TokenPalette:
    """Backgrounds for ordinary tokens and the colours of everything drawn around them."""

    key: str
    label: str
    dark: bool
    backgrounds: tuple[str, ...]  # ordinary tokens; neighbours get different entries
    text: str  # token text on any background
    special_bg: str  # special-token badges
    special_text: str
    unknown_bg: str  # [UNK] and other lossy positions
    unknown_text: str
    difference: str  # outline of tokens that segment differently from the reference row
    group: str  # bracket under byte tokens that build one character
    border: str | None = None  # drawn around every token (high contrast), or None

    @property
    def size(self) -> int:
        return len(self.backgrounds)

    def color_of(self, token_id: int) -> str:
        """The primary background of `token_id` (what it shows unless a neighbour has it)."""
        return self.backgrounds[color_index(token_id, self.size)]


# -- colour arithmetic ------------------------------------------------------------------------


def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    if len(c) != 6:
        raise ValueError(f"colour {color!r} is not #rrggbb")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _hex(rgb: Sequence[float]) -> str:
    return "#" + "".join(f"{max(0, min(255, round(v))):02x}" for v in rgb)


def mix(a: str, b: str, t: float) -> str:
    """`a` moved a fraction `t` of the way to `b`: ``mix("#000000", "#ffffff", 0.5) == "#808080"``."""
    ra, rb = _rgb(a), _rgb(b)
    return _hex([x + (y - x) * t for x, y in zip(ra, rb, strict=True)])


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance, 0 (black) .. 1 (white)."""

    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in _rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG contrast ratio, 1 .. 21: ``contrast_ratio("#000000", "#ffffff") == 21.0``."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


# -- choosing colours -------------------------------------------------------------------------


def _hash(token_id: int) -> int:
    return ((token_id + 0x9E37) * 2654435761) & 0xFFFFFFFF


def color_index(token_id: int, n: int) -> int:
    """The primary colour slot of `token_id` among `n` (stable across runs and processes)."""
    return (_hash(token_id) >> 13) % n


def alternate_index(token_id: int, n: int) -> int:
    """A second slot, always different from the primary one (for `n` >= 2)."""
    step = 1 + (_hash(token_id) >> 7) % (n - 1)
    return (color_index(token_id, n) + step) % n


def assign_colors(ids: Sequence[int], n: int) -> list[int]:
    """Colour slot per token: its primary slot, or its alternate when the previous token has it.

    >>> slots = assign_colors([5, 5, 5], 8)
    >>> slots[0] != slots[1] and slots[1] != slots[2]
    True
    """
    out: list[int] = []
    prev = -1
    cache: dict[int, tuple[int, int]] = {}
    for t in ids:
        pa = cache.get(t)
        if pa is None:
            pa = cache[t] = (color_index(t, n), alternate_index(t, n))
        c = pa[0] if pa[0] != prev else pa[1]
        out.append(c)
        prev = c
    return out


# -- the palettes -----------------------------------------------------------------------------


def _build(key: str, label: str, dark: bool) -> TokenPalette:
    if key == "high-contrast":
        # Saturated fills, pure black text on every one (>= 7:1), a hard border between tokens.
        fills = ("#ffd166", "#7fd4ff", "#f0e442", "#ffb3d9", "#b8f2a6", "#ffa94d")
        return TokenPalette(
            key, label, dark, fills, "#000000",
            special_bg="#000000" if not dark else "#ffffff", special_text="#ffffff" if not dark else "#000000",
            unknown_bg="#ff4040", unknown_text="#000000", difference="#d000ff" if not dark else "#ff5cff",
            group="#000000" if not dark else "#ffffff", border="#000000" if not dark else "#ffffff",
        )
    base = TOL_LIGHT if key == "tol-light" else OKABE_ITO
    if dark:
        backgrounds = tuple(mix(c, "#101418", 0.62) for c in base)
        return TokenPalette(
            key, label, dark, backgrounds, "#f0f3f6",
            special_bg="#8957e5", special_text="#ffffff", unknown_bg="#8e1519", unknown_text="#ffffff",
            difference="#ff7b72", group="#c9d1d9",
        )
    backgrounds = tuple(mix(c, "#ffffff", 0.6) for c in base)
    return TokenPalette(
        key, label, dark, backgrounds, "#1f2328",
        special_bg="#6639ba", special_text="#ffffff", unknown_bg="#ffcccb", unknown_text="#82071e",
        difference="#cf222e", group="#57606a",
    )


PALETTE_LABELS = {
    "okabe-ito": "Okabe–Ito (colour-blind safe)",
    "tol-light": "Tol light (colour-blind safe)",
    "high-contrast": "High contrast (projector)",
}
DEFAULT_PALETTE = "okabe-ito"


def token_palette(key: str = DEFAULT_PALETTE, *, dark: bool = False) -> TokenPalette:
    """The palette `key` (see `PALETTE_LABELS`) in its light or dark variant."""
    if key not in PALETTE_LABELS:
        raise ValueError(f"unknown palette {key!r}; choose one of {', '.join(PALETTE_LABELS)}")
    return _build(key, PALETTE_LABELS[key], dark)


def token_colors(ids: Sequence[int], palette: TokenPalette) -> list[str]:
    """Background colour per token of `ids` (neighbours differ)."""
    bg = palette.backgrounds
    return [bg[i] for i in assign_colors(ids, palette.size)]


# Tokens the merge of the current step just created (merge timeline): bright, with black text.
FRESH_LIGHT = ("#ffd24d", "#000000")  # (background, text)
FRESH_DARK = ("#e0a100", "#000000")


def fresh_colors(*, dark: bool = False) -> tuple[str, str]:
    """(background, text) of tokens created by the merge of the current step."""
    return FRESH_DARK if dark else FRESH_LIGHT
