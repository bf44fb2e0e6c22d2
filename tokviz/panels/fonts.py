"""The fonts tokviz draws text in, the same on every machine: bundled, registered once per process.

`load_fonts` registers the files in ``tokviz.resources/fonts`` (`QFontDatabase.addApplicationFont`):
DejaVu Sans Mono for tokens and the corpus editor, then fonts for what it lacks (one Noto font per
script, DejaVu Sans, WenQuanYi Micro Hei for Han, kana and Hangul, Noto Color Emoji's flags, Symbola for
other emoji and symbols; see ``resources/fonts/README.md``). `token_font` is the monospace font with
those as fallbacks in that order; `with_fallbacks` gives any font (the application's) the same
fallbacks. The core's labels and tables learn which characters no font can draw
(`tokviz.core.display.tokens.set_glyph_test`, asked through `QFontMetrics.inFontUcs4`, which also sees
the machine's own fonts), and show them as ``⟨U+XXXX⟩``.

Qt reports every font in a family list that lacks OpenType tables for a script it meets
("OpenType support missing for ..."): notes about its fallback search, not problems, so that
category's notes (info messages) are switched off (``QT_LOGGING_RULES`` can switch them back on).

What this leaves out: sizes and zoom (the theme), colours.
"""

from __future__ import annotations

import threading
from importlib import resources

from PySide6.QtCore import QLoggingCategory
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetrics

from tokviz.core.display.tokens import set_glyph_test

TOKEN_FAMILY = "DejaVu Sans Mono"
# fallbacks in the order Qt tries them: scripts first, then the wide CJK font, then symbols
FALLBACK_FILES = (
    "NotoSansArabic-Regular.ttf", "NotoSansHebrew-Regular.ttf", "NotoSansSyriac-Regular.ttf",
    "NotoSansThaana-Regular.ttf", "NotoSansDevanagari-Regular.ttf", "NotoSansBengali-Regular.ttf",
    "NotoSansGurmukhi-Regular.ttf", "NotoSansGujarati-Regular.ttf", "NotoSansTamil-Regular.ttf",
    "NotoSansTelugu-Regular.ttf", "NotoSansKannada-Regular.ttf", "NotoSansMalayalam-Regular.ttf",
    "NotoSansThai-Regular.ttf", "NotoSansLao-Regular.ttf", "NotoSansKhmer-Regular.ttf",
    "NotoSansMyanmar-Regular.ttf", "NotoSansTagalog-Regular.ttf", "NotoSansEthiopic-Regular.ttf",
    "NotoSansCanadianAboriginal-Regular.ttf", "NotoSansVai-Regular.ttf", "NotoSansYi-Regular.ttf",
    "NotoSerifTibetan-Regular.ttf", "NotoSansMongolian-Regular.ttf", "NotoSansCherokee-Regular.ttf",
    "NotoSansJavanese-Regular.ttf", "DejaVuSans.ttf", "wqy-microhei.ttc",
    # before Symbola, whose boxed letters would otherwise split a flag's two regional indicators
    "NotoColorEmoji-Flags.ttf", "Symbola.ttf",
)
FONT_FILES = ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", *FALLBACK_FILES)
QUIET_RULES = "qt.text.font.db.info=false"

_fallbacks: list[str] | None = None  # families of FALLBACK_FILES once registered
_lock = threading.Lock()
_metrics = threading.local()  # QFontMetrics are reentrant: one per thread


def load_fonts() -> list[str]:
    """Register the bundled fonts (once; needs the QGuiApplication) and return the fallback
    families in order."""
    global _fallbacks
    with _lock:
        if _fallbacks is not None:
            return _fallbacks
        QLoggingCategory.setFilterRules(QUIET_RULES)
        folder = resources.files("tokviz.resources").joinpath("fonts")
        fallbacks: list[str] = []
        for name in FONT_FILES:
            font_id = QFontDatabase.addApplicationFont(str(folder.joinpath(name)))
            families = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
            if name in FALLBACK_FILES:
                fallbacks += [f for f in families[:1] if f not in fallbacks]
        _fallbacks = fallbacks
    set_glyph_test(can_draw)
    return fallbacks


def _families(first: str) -> list[str]:
    return [first, *[f for f in load_fonts() if f != first]]


def with_fallbacks(font: QFont) -> QFont:
    """`font` with the bundled fallbacks after the family it really resolves to (an alias such as
    "Sans Serif" is not a family: listed first, Qt would skip it and make a fallback the font)."""
    out = QFont(font)
    out.setFamilies(_families(QFontInfo(font).family()))
    return out


def token_font(reference: QFont | None = None, *, scale: float = 1.0) -> QFont:
    """The monospace token font (bundled DejaVu Sans Mono and the fallbacks) at the size of
    `reference` (the application font by default) times `scale`."""
    font = QFont()
    font.setFamilies(_families(TOKEN_FAMILY))
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    if reference is not None:
        size = reference.pointSizeF()
        if size > 0:
            font.setPointSizeF(size * scale)
        else:
            font.setPixelSize(max(6, round(reference.pixelSize() * scale)))
    return font


def can_draw(cp: int) -> bool:
    """Whether some font (bundled or the machine's) has a glyph for code point `cp`."""
    metrics = getattr(_metrics, "value", None)
    if metrics is None:
        metrics = _metrics.value = QFontMetrics(token_font())
    return metrics.inFontUcs4(cp)
