"""Bundled fonts: the token font and its fallbacks load from the package on any machine, emoji,
Hangul, kana, Han and a dozen scripts are drawn with them, a character no font has is shown as
``⟨U+XXXX⟩`` in labels, captions and the token view's exports, and Qt prints no font warnings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QFontInfo, QFontMetrics, QRawFont

from tests.conftest import FONTS
from tokviz.core.display.tokens import undrawn_marked, visible_token
from tokviz.panels.fonts import FONT_FILES, can_draw, load_fonts, token_font

SAMPLES = {  # one character per script the fallbacks are there for
    "emoji": "😀👋🏽", "Hangul": "한국어", "kana": "ひらがなカタカナ", "Han": "東京漢字", "Devanagari": "हिन्दी",
    "Arabic": "العربية", "Hebrew": "עברית", "Thai": "ภาษาไทย", "Tamil": "தமிழ்", "Ethiopic": "አማርኛ",
    "Myanmar": "မြန်မာ", "Khmer": "ខ្មែរ", "Cyrillic": "русский", "Greek": "ελληνικά", "marks": "␣⇥↵␍⟨⟩⍽",
}
NOWHERE = "\U0010fffd\U00011005"  # a private-use code point, and Brahmi (no bundled font has it)


def test_every_bundled_font_ships_with_its_licence_and_stays_small():
    files = sorted(p.name for p in FONTS.iterdir())
    assert set(FONT_FILES) <= set(files)
    assert {"LICENSE-DejaVu.txt", "LICENSE-Noto.txt", "LICENSE-WenQuanYi.txt", "LICENSE-Symbola.txt",
            "README.md"} <= set(files)
    assert sum((FONTS / f).stat().st_size for f in FONT_FILES) < 15 * 2**20
    readme = (FONTS / "README.md").read_text(encoding="utf-8")
    assert all(f"`{f}`" in readme for f in FONT_FILES)


@pytest.mark.parametrize("script", list(SAMPLES))
def test_the_bundled_files_themselves_hold_every_sample(script):
    """Coverage read from the font files (QRawFont): not from whatever this machine has installed."""
    raws = [QRawFont(str(FONTS / f), 12) for f in FONT_FILES]
    assert all(r.isValid() for r in raws)
    for ch in SAMPLES[script]:
        assert any(r.supportsCharacter(ord(ch)) for r in raws), f"{ch!r} U+{ord(ch):04X}"


def test_token_font_is_the_bundled_monospace_with_fallbacks(qapp):
    fallbacks = load_fonts()
    assert fallbacks[-3:] == ["WenQuanYi Micro Hei", "Noto Color Emoji Flags", "Symbola"]
    assert "Noto Sans Devanagari" in fallbacks and "Noto Serif Tibetan" in fallbacks
    font = token_font()
    assert font.families()[0] == "DejaVu Sans Mono" and font.families()[1:] == fallbacks
    assert QFontInfo(font).family() == "DejaVu Sans Mono" and QFontInfo(font).fixedPitch()
    metrics = QFontMetrics(font)
    for text in SAMPLES.values():
        for ch in text:
            assert metrics.inFontUcs4(ord(ch)) and can_draw(ord(ch)), f"U+{ord(ch):04X}"
    assert not any(can_draw(ord(c)) for c in NOWHERE)


def test_labels_mark_only_what_no_font_draws(qapp):
    load_fonts()
    assert visible_token(" 한국어 😀".encode()) == "␣한국어␣😀"
    assert visible_token(f"a{NOWHERE}b".encode()) == "a⟨U+10FFFD⟩⟨U+11005⟩b"
    assert undrawn_marked(f"Step 3 · 東京 {NOWHERE}") == "Step 3 · 東京 ⟨U+10FFFD⟩⟨U+11005⟩"


def test_token_view_and_its_html_export_show_the_code_point(window, qtbot, tmp_path):
    from tokviz.core import TrainSettings

    window.script.set_corpus_text("ab " * 40, word_counts=False)
    assert window.script.start_training(TrainSettings(merges=3, units="chars", min_count=1))
    assert window.script.wait_for_training(60_000) == "finished"
    view = window.token_view_panel
    text = f"ab 한 {NOWHERE[0]}"
    view.set_text(text)
    qtbot.waitUntil(lambda: view.result is not None and view.result.request.text == text
                    and view.result.reference is not None, timeout=30_000)
    html_file = tmp_path / "tokens.html"
    view.save_html(html_file)
    text = html_file.read_text(encoding="utf-8")
    assert "⟨U+10FFFD⟩" in text and "\U0010fffd" not in text and "한" in text


def test_no_font_warnings_on_stderr(tmp_path):
    """A real process lays out text in scripts no font covers (Brahmi), and in every fallback's:
    Qt's notes about its fallback search ("OpenType support missing ...") stay off stderr."""
    script = tmp_path / "show.py"
    script.write_text(
        "import sys\n"
        "from tokviz.app.gui import create_application, create_main_window\n"
        "app = create_application()\n"
        "w = create_main_window()\n"
        "w.script.set_corpus_text(sys.argv[1], word_counts=False)\n"
        "w.token_view_panel.set_text(sys.argv[1])\n"
        "for _ in range(20):\n"
        "    app.processEvents()\n"
        "w.grab()\n"
        "w.shutdown()\n", encoding="utf-8")
    text = " ".join(SAMPLES.values()) + " བོད་ཡིག ᠮᠣᠩᠭᠣᠯ ꦗꦮ ᏣᎳᎩ 🇫🇷 " + NOWHERE
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "TOKVIZ_SETTINGS_FILE": str(tmp_path / "s.ini"), "PYTHONPATH": str(Path(__file__).parents[2])}
    out = subprocess.run([sys.executable, str(script), text], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    noise = [line for line in out.stderr.splitlines() if "propagateSizeHints" not in line]  # offscreen only
    assert noise == []
