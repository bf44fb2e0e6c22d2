"""`TokenCompareView`: the same text cut by several tokenizers, one row each, differences outlined.

Each row has a header (tokenizer, token count, chars/token, how many tokens differ from the first
row, round trip) and a `TokenFlowView` of the start of the text drawn at its full height: the rows
stack under one scroll bar (the view's own), never a scroll area inside a scroll area. Tokens whose
cut points differ from the first row's (`tokviz.core.display.alignment`) are outlined in the
palette's difference colour; superwords its timeline declares have a bar under them, as in the main
view. A row added since the last `set_rows` is scrolled into view and its
header flashes briefly. `TokenBatchView` draws a padded batch: the id
matrix and its attention mask as two grids.

What this leaves out: encoding (`tokviz.engine.token_view.token_view_engine`).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.display.palette import TokenPalette, assign_colors, token_palette
from tokviz.panels.base import error_color, monospace_font, muted_color, ok_color

from .flow_view import TokenFlowView

ROW_LINES = 20  # a row shows at most this many lines of the text's start
FLASH_MS = 900


class TokenCompareView(QScrollArea):
    """Rows of tokenizations; feed with `set_rows(rows, ...)` (`RowResult`s, first = reference)."""

    token_clicked = Signal(int, int)  # row, token index
    row_flashed = Signal(int)  # a newly added row was scrolled into view and flashed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # always there: a scroll bar coming and going would change the rows' width and layout
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self._box = QWidget()
        self._layout = QVBoxLayout(self._box)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._layout.setSpacing(2)
        self._layout.addStretch(1)
        self.setWidget(self._box)
        self._headers: list[QLabel] = []
        self.views: list[TokenFlowView] = []
        self._palette = token_palette()
        self._mode = "text"
        self._tooltip = None
        self.titles: list[str] = []  # the rows of the last `set_rows`, to spot a new one
        self.flashing = -1  # the row whose header is lit, -1 when none
        self._flash_timer = QTimer(self, singleShot=True, interval=FLASH_MS)
        self._flash_timer.timeout.connect(self._on_flash_timer_timeout)

    def set_token_palette(self, palette: TokenPalette) -> None:
        self._palette = palette
        for v in self.views:
            v.set_token_palette(palette)

    def set_mode(self, mode: str) -> None:
        self._mode = mode
        for v in self.views:
            v.set_mode(mode)
            self._fit(v)

    def set_tooltip_provider(self, provider) -> None:
        """`provider(row, index) -> str`."""
        self._tooltip = provider
        for r, v in enumerate(self.views):
            v.set_tooltip_provider(self._row_tooltip(r))

    def _row_tooltip(self, row: int):
        return None if self._tooltip is None else (lambda i: self._tooltip(row, i))

    def _ensure_rows(self, n: int) -> None:
        while len(self.views) < n:
            r = len(self.views)
            header = QLabel()
            header.setTextFormat(Qt.TextFormat.RichText)
            header.setWordWrap(True)  # never wider than the view
            header.setObjectName(f"compare_header_{r}")
            view = TokenFlowView(max_lines=ROW_LINES)
            view.setObjectName(f"compare_row_{r}")
            view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # one scroll: the view's
            view.set_token_palette(self._palette)
            view.set_mode(self._mode)
            view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            view.set_tooltip_provider(self._row_tooltip(r))
            view.token_clicked.connect(lambda i, r=r: self.token_clicked.emit(r, i))
            view.laid_out.connect(  # never from a resize; skipped when the row was deleted meanwhile
                lambda v=view: QTimer.singleShot(0, v, lambda: self._fit(v)))
            self._layout.insertWidget(self._layout.count() - 1, header)
            self._layout.insertWidget(self._layout.count() - 1, view)
            self._headers.append(header)
            self.views.append(view)
        for i, (h, v) in enumerate(zip(self._headers, self.views, strict=True)):
            h.setVisible(i < n)
            v.setVisible(i < n)

    def _fit(self, view: TokenFlowView) -> None:
        """The row's full height: its lines are capped by the view itself (`ROW_LINES`)."""
        fm = QFontMetrics(view.font())
        one = fm.height() * (2 if self._mode == "both" else 1) + 14
        height = max(one + 4, min(view.content_height() + 4, one * ROW_LINES + 8))  # an estimate may run over
        if abs(view.height() - height) > 1:  # a row laid out lazily grows once more: no resize loop
            view.setFixedHeight(height)

    def header_text(self, row: int) -> str:
        return self._headers[row].text() if row < len(self._headers) else ""

    def set_rows(self, rows: list, *, text_length: int) -> None:
        self._ensure_rows(len(rows))
        pal = self.palette()
        ok, bad, muted = ok_color(pal).name(), error_color(pal).name(), muted_color(pal).name()
        ref_count = rows[0].stats.tokens if rows else 0
        for r, row in enumerate(rows):
            st = row.stats
            diff = " · the reference" if len(rows) > 1 and r == 0 else ""
            if r > 0:
                n_diff = sum(row.differs)
                delta = st.tokens - ref_count
                diff = (f" · <span style='color:{bad if n_diff else ok}'>{n_diff:,} of {len(row.differs):,} shown "
                        f"tokens cut differently</span> from the first row · {delta:+,} tokens")
            rt = row.round_trip
            rt_html = ""
            if rt is not None:
                rt_html = (f" · <span style='color:{ok}'>round trip ✓</span>" if rt.ok else
                           f" · <span style='color:{bad}'>{'lossy' if rt.lossy else 'not exact'} ✗</span>")
            more = "" if row.shown >= len(row.encoding.ids) else f" <span style='color:{muted}'>(start shown)</span>"
            self._headers[r].setText(
                f"<b>{row.spec.title}</b> · {st.tokens:,} tokens · {st.chars_per_token:.2f} chars/token"
                f"{diff}{rt_html}{more}")
            enc, labels = row.encoding, row.labels
            ids = enc.ids[: row.shown]
            view = self.views[r]
            view.set_tokens(labels.labels, ids, labels.kinds, labels.breaks, row.slots, differs=row.differs,
                            marked=row.marked)
            self._fit(view)
        titles = [row.spec.title for row in rows]
        new = [r for r, t in enumerate(titles) if t not in self.titles]
        if self.titles and new:  # after this event: scrolling to it lays out the whole column again
            QTimer.singleShot(0, self, lambda r=new[-1]: self.flash_row(r))
        self.titles = titles

    def flash_row(self, row: int) -> None:
        """Scroll `row` into view and light its header for a moment."""
        if not 0 <= row < len(self.views):
            return
        self._on_flash_timer_timeout()
        self.flashing = row
        pal = self.palette()
        self._headers[row].setStyleSheet(f"background: {pal.color(QPalette.ColorRole.Highlight).name()};"
                                         f"color: {pal.color(QPalette.ColorRole.HighlightedText).name()};")
        self._layout.activate()  # the new row's geometry, before scrolling to it
        self.ensureWidgetVisible(self.views[row], 0, 0)
        self.ensureWidgetVisible(self._headers[row], 0, 0)
        self._flash_timer.start()
        self.row_flashed.emit(row)

    def end_flash(self) -> None:
        """Put the lit header back now (a picture taken straight after a new row)."""
        self._flash_timer.stop()
        self._on_flash_timer_timeout()

    def _on_flash_timer_timeout(self) -> None:
        if 0 <= self.flashing < len(self._headers):
            self._headers[self.flashing].setStyleSheet("")
        self.flashing = -1


class BatchBox(QWidget):
    """The Batch tab: BOS/EOS/padding choices over a `TokenBatchView`, and a note."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        bl = QVBoxLayout(self)
        bl.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.bos_box = QCheckBox("BOS", objectName="batch_bos")
        self.eos_box = QCheckBox("EOS", objectName="batch_eos")
        self.pad_box = QComboBox(objectName="batch_pad")
        self.pad_box.addItem("Pad right", "right")
        self.pad_box.addItem("Pad left", "left")
        for w in (self.bos_box, self.eos_box, self.pad_box):
            row.addWidget(w)
        row.addStretch(1)
        bl.addLayout(row)
        self.batch_view = TokenBatchView()
        scroll = QScrollArea()
        scroll.setWidget(self.batch_view)
        scroll.setWidgetResizable(False)
        bl.addWidget(scroll, 1)
        self.batch_note = QLabel(wordWrap=True)
        self.batch_note.setMinimumWidth(50)
        bl.addWidget(self.batch_note)

    def show_batch(self, batch) -> None:
        """Show a `BatchResult`: its grids and what its BOS/EOS/PAD ids are."""
        self.batch_view.set_batch(batch)
        self.batch_note.setText(
            f"Each non-empty line is a sequence: {len(batch.lines)} (at most 64). This tokenizer has no BOS/EOS/PAD "
            f"tokens: they are shown with the ids past its vocabulary ({batch.pad_id - 2}, {batch.pad_id - 1}, "
            f"{batch.pad_id}).")


class TokenBatchView(QWidget):
    """The padded id matrix (coloured by id) and the attention mask (1 filled, 0 empty) as grids."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._batch = None
        self._palette = token_palette()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def set_token_palette(self, palette: TokenPalette) -> None:
        self._palette = palette
        self.update()

    def set_batch(self, batch_result) -> None:
        self._batch = batch_result
        self.updateGeometry()
        self.adjustSize()
        self.update()

    def _metrics(self):
        font = monospace_font(self.font(), scale=0.85)
        fm = QFontMetrics(font)
        b = self._batch
        widest = max((len(str(int(v))) for v in b.batch.ids.flat), default=1) if b is not None else 1
        return font, fm, fm.horizontalAdvance("0") * max(widest, 3) + 8, fm.height() + 6

    def sizeHint(self) -> QSize:
        if self._batch is None:
            return QSize(200, 60)
        _, fm, cw, ch = self._metrics()
        rows, cols = self._batch.batch.ids.shape
        return QSize(cols * cw + 12, (rows + 1) * ch + 12 + (rows + 1) * (ch // 2 + 4) + 16)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        b = self._batch
        if b is None or b.batch.ids.size == 0:
            p.setPen(muted_color(pal))
            p.drawText(self.rect().adjusted(8, 8, -8, -8), Qt.AlignmentFlag.AlignLeft, "No lines to batch.")
            return
        font, fm, cw, ch = self._metrics()
        p.setFont(font)
        ids, mask = b.batch.ids, b.batch.attention_mask
        rows, cols = ids.shape
        text_color = QColor(self._palette.text)
        colors = [QColor(c) for c in self._palette.backgrounds]
        special = {b.pad_id: "pad", b.bos_id: "bos", b.eos_id: "eos"}
        p.setPen(pal.color(QPalette.ColorRole.Text))
        p.drawText(QRect(4, 2, cols * cw, ch), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   f"ids ({rows} × {cols})")
        cell = ch // 2 + 4  # the mask grid sits under the ids, one small square per id cell
        mx, my = 4, 8 + (rows + 1) * ch
        p.drawText(QRect(mx, my, 400, ch), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   "attention mask (■ token, □ padding)")
        for r in range(rows):
            y = 4 + (r + 1) * ch
            slots = assign_colors([int(v) for v in ids[r]], self._palette.size)
            for c in range(cols):
                v = int(ids[r, c])
                rect = QRect(4 + c * cw, y, cw - 2, ch - 2)
                if v in special and v is not None:
                    p.fillRect(rect, pal.color(QPalette.ColorRole.AlternateBase) if special[v] == "pad"
                               else QColor(self._palette.special_bg))
                    p.setPen(muted_color(pal) if special[v] == "pad" else QColor(self._palette.special_text))
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, special[v])
                else:
                    p.fillRect(rect, colors[slots[c] % len(colors)])
                    p.setPen(text_color)
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(v))
                m = QRect(mx + c * cw + (cw - cell) // 2, my + ch + r * cell, cell - 2, cell - 2)
                p.setPen(pal.color(QPalette.ColorRole.Text))
                if mask[r, c]:
                    p.fillRect(m, pal.color(QPalette.ColorRole.Text))
                else:
                    p.drawRect(m.adjusted(0, 0, -1, -1))
        p.end()
