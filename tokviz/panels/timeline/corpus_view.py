"""`CorpusStepView`: a window of the corpus segmented at step k, tokens coloured, fresh merges lit.

The document text is set only when the window moves; each step only replaces the per-block
format ranges (one `QTextLayout.FormatRange` per token piece, like a syntax highlighter), so a
step costs one encode of the window plus one relayout. Colours are stable per token id and the
same as the token view's (`tokviz.core.display.palette`; neighbours always differ); tokens created by the current merge are bold on a bright background.
Word-frequency tables show one line per word: its count, then the word's segmentation.
"""

from __future__ import annotations

from bisect import bisect_right

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from tokviz.core.bpe.replay import Segmentation
from tokviz.core.display.palette import DEFAULT_PALETTE, assign_colors, fresh_colors, token_palette
from tokviz.core.display.tokens import visible_token
from tokviz.panels.base import is_dark, monospace_font


class CorpusStepView(QPlainTextEdit):
    """Read-only text whose tokens are coloured by `show(segments)`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline_corpus_view")
        self.setReadOnly(True)
        self.setMinimumHeight(48)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self._text = ""
        self._pieces: list[tuple[int, Segmentation]] = []  # (offset in document, segmentation)
        self._vocab: list[bytes] = []
        self._formats: dict[tuple[int, bool], QTextCharFormat] = {}  # (colour slot, fresh)
        # (doc start, doc end, format) -> FormatRange: most tokens survive a step unchanged
        self._ranges: dict[tuple, QTextLayout.FormatRange] = {}
        self._dark = False
        self.fresh_count = 0  # tokens lit in the last `show`
        self._starts: list[list[int]] = []
        self._fresh: list[set[int]] = []
        self.verticalScrollBar().valueChanged.connect(self._on_scroll_value_changed)
        self.setFont(monospace_font(self.font(), scale=1.1))

    def set_content(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self._ranges.clear()
            self.setPlainText(text)

    def set_vocab(self, vocab: list[bytes]) -> None:
        self._vocab = vocab

    def _format(self, slot: int, fresh: bool) -> QTextCharFormat:
        key = (-1 if fresh else slot, fresh)
        f = self._formats.get(key)
        if f is None:
            palette = token_palette(DEFAULT_PALETTE, dark=self._dark)
            bg, fg = fresh_colors(dark=self._dark) if fresh else (palette.backgrounds[slot], palette.text)
            f = QTextCharFormat()
            f.setBackground(QColor(bg))
            f.setForeground(QColor(fg))
            if fresh:
                f.setFontWeight(QFont.Weight.Bold)
                f.setFontUnderline(True)
            self._formats[key] = f
        return f

    def show(self, pieces: list[tuple[int, Segmentation]]) -> None:  # noqa: A003 (not QWidget.show)
        """Colour the document: `pieces` are segmentations placed at document offsets.

        Only the blocks in view get formats (and a relayout); scrolling and resizing colour the
        blocks that come into view, so a step costs the same for any window size."""
        dark = is_dark(self.palette())
        if dark != self._dark:
            self._dark = dark
            self._formats.clear()
            self._ranges.clear()
        self._pieces = pieces
        self._starts = [[a for a, _ in seg.spans] for _, seg in pieces]
        self._fresh = [set(seg.fresh) for _, seg in pieces]
        self.fresh_count = sum(len(f) for f in self._fresh)
        self._apply_visible()

    def _visible_blocks(self) -> list:
        block = self.firstVisibleBlock()
        height = self.viewport().height()
        offset = self.contentOffset()
        out = []
        while block.isValid():
            out.append(block)
            if self.blockBoundingGeometry(block).translated(offset).top() > height:
                break
            block = block.next()
        return out

    def _apply_visible(self) -> None:
        blocks = self._visible_blocks()
        if not blocks:
            return
        vis_start = blocks[0].position()
        vis_end = blocks[-1].position() + blocks[-1].length()
        # (doc start, doc end, token id, fresh) per token in view, in document order
        visible = []
        for (offset, seg), starts, fresh in zip(self._pieces, self._starts, self._fresh):
            i = max(0, bisect_right(starts, vis_start - offset) - 1)
            ids, spans = seg.ids, seg.spans
            while i < len(ids):
                a, b = spans[i]
                if offset + a >= vis_end:
                    break
                if b > a:
                    visible.append((offset + a, offset + b, ids[i], i in fresh))
                i += 1
        n_colors = token_palette(DEFAULT_PALETTE, dark=self._dark).size
        slots = assign_colors([t for _, _, t, _ in visible], n_colors)
        ranges = [(a, b, self._format(slot, fr)) for (a, b, _, fr), slot in zip(visible, slots)]
        cache = self._ranges
        if len(cache) > 50_000:
            cache.clear()
        j, n = 0, len(ranges)
        for block in blocks:
            start = block.position()
            end = start + block.length() - 1  # without the paragraph separator
            out = []
            while j < n and ranges[j][1] <= start:
                j += 1
            t = j
            while t < n and ranges[t][0] < end:
                a, b, f = ranges[t]
                key = (max(a, start), min(b, end), id(f))  # f lives in self._formats
                fr = cache.get(key)
                if fr is None:
                    fr = cache[key] = QTextLayout.FormatRange()
                    fr.start = key[0] - start
                    fr.length = key[1] - key[0]
                    fr.format = f
                out.append(fr)
                t += 1
            block.layout().setFormats(out)
        self.document().markContentsDirty(vis_start, vis_end - vis_start)
        self.viewport().update()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._pieces:
            self._apply_visible()

    def _on_scroll_value_changed(self, _value: int) -> None:
        if self._pieces:
            self._apply_visible()

    def token_at(self, pos: int) -> tuple[int, int, int] | None:
        """(id, start, end) of the token covering document position `pos`."""
        for offset, seg in reversed(self._pieces):
            if pos >= offset:
                rel = pos - offset
                starts = [a for a, _ in seg.spans]
                i = bisect_right(starts, rel) - 1
                if 0 <= i < len(seg.ids) and seg.spans[i][0] <= rel < seg.spans[i][1]:
                    return seg.ids[i], offset + seg.spans[i][0], offset + seg.spans[i][1]
                return None
        return None

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            pos = self.cursorForPosition(event.pos()).position()
            hit = self.token_at(pos)
            if hit is not None and 0 <= hit[0] < len(self._vocab):
                tid = hit[0]
                QToolTip.showText(event.globalPos(), f"{visible_token(self._vocab[tid])}  (id {tid})", self)
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)
