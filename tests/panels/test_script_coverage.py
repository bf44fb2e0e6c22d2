"""Every script of the shared UDHR is drawn outside the token view too: the corpus editor and the
Compare panel's Documents table either have a glyph for each character (the bundled fonts and their
fallbacks) or, in the table, show it as ``⟨U+XXXX⟩``; a pair of regional indicators is one flag."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QTextLayout

from tests.conftest import shared_file
from tokviz.core.compare.run import Comparison, prepare_documents

# Qt asks fontconfig for Thaana's language as "div", fontconfig calls it "dv": no font is ever taken for
# Thaana. Control characters have no glyph by design.
QT_NEVER_DRAWS = re.compile("[\u0780-\u07bf\x00-\x1f\x7f-\x9f]")
MARK = re.compile("⟨U\\+[0-9A-F]{4,6}⟩")
SAMPLES = {"Tibetan": "བོད་ཡིག", "Mongolian": "ᠮᠣᠩᠭᠣᠯ", "Javanese": "ꦧꦱꦗꦮ", "Cherokee": "ᏣᎳᎩ"}
FLAGS = "🇫🇷🇯🇵🇧🇷🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"  # France, Japan, Brazil, Scotland


@pytest.fixture(scope="module")
def udhr_chars() -> set[str]:
    text = shared_file("corpora", "udhr2_all.txt").read_text(encoding="utf-8")
    return {c for c in text if not c.isspace()}


def undrawn(metrics: QFontMetrics, text) -> set[str]:
    return {c for c in text if not c.isspace() and not metrics.inFontUcs4(ord(c))}


def test_corpus_editor_draws_every_script_of_the_udhr(window, udhr_chars):
    metrics = QFontMetrics(window.corpus_panel.editor.font())
    missing = undrawn(metrics, udhr_chars)
    assert {c for c in missing if not QT_NEVER_DRAWS.match(c)} == set(), sorted(f"U+{ord(c):04X}" for c in missing)
    assert undrawn(metrics, "".join(SAMPLES.values())) == set()


def test_compare_documents_table_draws_every_title_or_its_code_points(window, udhr_chars):
    text = shared_file("corpora", "udhr2_all.txt").read_text(encoding="utf-8")
    documents, reference = prepare_documents(text)
    panel = window.compare_panel
    panel.documents_model.set_comparison(Comparison((), tuple(documents), reference))
    table, model = panel.documents_table, panel.documents_table.model()
    titles = [model.index(row, 1).data(Qt.ItemDataRole.DisplayRole) for row in range(model.rowCount())]
    assert len(titles) == len(documents) > 300
    shown = MARK.sub("", "".join(titles))
    assert undrawn(QFontMetrics(table.font()), shown) == set()


@pytest.mark.parametrize("where", ["editor", "table"])
def test_a_flag_is_one_glyph_not_two_boxed_letters(window, where):
    widget = window.corpus_panel.editor if where == "editor" else window.compare_panel.documents_table
    layout = QTextLayout(FLAGS, widget.font())
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    runs = [(run.rawFont().familyName(), len(run.glyphIndexes())) for run in layout.glyphRuns()]
    assert runs == [("Noto Color Emoji Flags", 4)]
