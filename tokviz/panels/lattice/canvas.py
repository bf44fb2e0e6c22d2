"""`LatticeCanvas`: a word's Unigram lattice drawn as nodes and edges.

The nodes (positions 0..n between the characters, numbered) sit on a line under the word's
characters; each edge (a piece matching a stretch of the word) is a bar under its stretch with
the piece and its score; the best path's bars are on the row next to the nodes, filled with the
highlight colour; the other pieces are on the rows below (`tokviz.core.unigram.lattice_layout`
decides the rows). `set_highlight` outlines another path (an n-best alternative, a sample).
Edges can be hovered for a tooltip. What it leaves out: computing the lattice and the controls
(`tokviz.panels.lattice.panel`).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from tokviz.core.unigram.lattice_layout import LatticeLayout
from tokviz.panels.base import monospace_font

MARGIN = 12
NODE_R = 4


class LatticeCanvas(QWidget):
    """Paints a `LatticeLayout`; sized to it (put it in a scroll area)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.layout_: LatticeLayout | None = None
        self.highlight: list[int] = []  # indices of edges outlined (another path)
        self._rects: list[QRect] = []
        self._update_metrics()

    # -- data ------------------------------------------------------------------------------------

    def set_layout(self, layout: LatticeLayout | None) -> None:
        self.layout_ = layout
        self.highlight = []
        self._relayout()

    def set_highlight(self, edges: list[int]) -> None:
        self.highlight = list(edges)
        self.update()

    def edge_rect(self, index: int) -> QRect:
        """Where edge `index` of the layout is drawn."""
        return self._rects[index]

    def drawn_best_path(self) -> list[tuple[int, int, str]]:
        """(start, end, piece) of the bars filled as the best path, left to right (what a user sees
        highlighted; tests compare it with the encoder's segmentation)."""
        lay = self.layout_
        if lay is None:
            return []
        filled = [(self._rects[k].left(), e) for k, e in enumerate(lay.edges) if e.on_best]
        return [(e.start, e.end, e.piece) for _, e in sorted(filled, key=lambda t: (t[0], t[1].end))]

    # -- geometry --------------------------------------------------------------------------------

    def _update_metrics(self) -> None:
        self._mono = monospace_font(self.font())
        fm = QFontMetrics(self._mono)
        self._cell = max(28, fm.horizontalAdvance("-00.00") + 8)  # a score fits under a one-character piece
        self._row = fm.height() * 2 + 8
        self._fm = fm

    def changeEvent(self, event) -> None:
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.FontChange:
            self._update_metrics()
            self._relayout()
        super().changeEvent(event)

    def _node_x(self, i: int) -> int:
        return MARGIN + i * self._cell

    def _base_y(self) -> int:
        """The node line: under the node numbers and the characters."""
        return MARGIN + 2 * self._fm.height() + NODE_R + 2

    def _relayout(self) -> None:
        lay = self.layout_
        self._rects = []
        if lay is not None:
            base = self._base_y()
            for e in lay.edges:
                x0, x1 = self._node_x(e.start), self._node_x(e.end)
                if x1 - x0 < self._cell // 2:  # width 0: a small bar on its node
                    x0, x1 = x0 - self._cell // 4, x0 + self._cell // 4
                top = base + NODE_R + 6 + e.level * self._row
                self._rects.append(QRect(x0 + 2, top, max(6, x1 - x0 - 4), self._row - 8))
        self.updateGeometry()
        self.resize(self.sizeHint())
        self.update()

    def sizeHint(self) -> QSize:
        lay = self.layout_
        n = lay.n_nodes if lay else 1
        levels = lay.n_levels if lay else 1
        return QSize(2 * MARGIN + max(1, n - 1) * self._cell, self._base_y() + NODE_R + 6 + levels * self._row + MARGIN)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def index_at(self, pos: QPoint) -> int:
        for k, r in enumerate(self._rects):
            if r.contains(pos):
                return k
        return -1

    # -- painting --------------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        lay = self.layout_
        if lay is None:
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No word")
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setFont(self._mono)
        text_c = pal.color(QPalette.ColorRole.Text)
        hi = pal.color(QPalette.ColorRole.Highlight)
        hi_text = pal.color(QPalette.ColorRole.HighlightedText)
        mid = pal.color(QPalette.ColorRole.Mid)
        alt = QColor("#e08000")
        base = self._base_y()
        fm = self._fm
        # the nodes and the characters between them
        p.setPen(QPen(mid, 1))
        p.drawLine(self._node_x(0), base, self._node_x(lay.n_nodes - 1), base)
        for i in range(lay.n_nodes):
            x = self._node_x(i)
            p.setBrush(text_c)
            p.drawEllipse(QPoint(x, base), NODE_R, NODE_R)
            p.setPen(text_c)
            p.drawText(QRect(x - self._cell // 2, MARGIN, self._cell, fm.height()), Qt.AlignmentFlag.AlignCenter,
                       str(i))
            if i < lay.n_nodes - 1:
                ch = lay.word[i]
                p.drawText(QRect(x, MARGIN + fm.height(), self._cell, fm.height()),
                           Qt.AlignmentFlag.AlignCenter, ch if ch.isprintable() and not ch.isspace() else "·")
            p.setPen(QPen(mid, 1))
        outlined = set(self.highlight)
        for k, (e, r) in enumerate(zip(lay.edges, self._rects)):
            if e.on_best:
                p.setBrush(hi)
                p.setPen(QPen(hi.darker(130), 2))
                color = hi_text
            else:
                p.setBrush(pal.color(QPalette.ColorRole.AlternateBase))
                p.setPen(QPen(mid, 1))
                color = text_c
            if k in outlined:
                p.setPen(QPen(alt, 3))
            p.drawRoundedRect(r, 4, 4)
            p.setPen(color)
            label = fm.elidedText(e.piece, Qt.TextElideMode.ElideRight, r.width() - 4)
            half = r.height() // 2
            p.drawText(QRect(r.left(), r.top(), r.width(), half), Qt.AlignmentFlag.AlignCenter, label)
            score = fm.elidedText(f"{e.log_prob:.2f}", Qt.TextElideMode.ElideRight, r.width() - 4)
            p.drawText(QRect(r.left(), r.top() + half, r.width(), r.height() - half), Qt.AlignmentFlag.AlignCenter,
                       score)

    def mouseMoveEvent(self, event) -> None:
        k = self.index_at(event.position().toPoint())
        lay = self.layout_
        if k < 0 or lay is None:
            QToolTip.hideText()
            return
        e = lay.edges[k]
        what = "unknown character" if e.id < 0 else f"id {e.id}"
        best = " · on the best path" if e.on_best else ""
        QToolTip.showText(event.globalPosition().toPoint(),
                          f"{e.piece!r} ({what}) · nodes {e.start}→{e.end} · log p {e.log_prob:.3f} "
                          f"(p = {math.exp(e.log_prob):.3g}){best}", self)
