"""`TokenFlowView`: tokens drawn as coloured cells that flow and wrap like text.

One rectangle and one text call per token (never per character). Layout is lazy: the lines the
viewport needs are laid out at once, the rest in short slices on idle time, so a text of a million
characters paints its first screen immediately and the window stays responsive. Modes: ``text``
(token text), ``ids``, ``both`` (text over id). Byte tokens that build one character are kept on one
line and bracketed together with the character written under them. Special tokens are badges,
unknown tokens are struck through, tokens differing from a reference row are outlined, superwords underlined.

Signals: ``token_clicked(index)``, ``token_hovered(index)`` (-1 when leaving tokens). Tooltips come
from a callback (`set_tooltip_provider`). Keyboard: Left/Right move the selected token.

What this leaves out: encoding and colours' choice (`tokviz.core.display.palette`).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget

from tokviz.core.display.palette import TokenPalette, token_palette
from tokviz.core.display.tokens import EMPTY, INSERTED, SPECIAL, UNKNOWN
from tokviz.panels.base import highlight_width, monospace_font, small_print_px

MODES = ("text", "ids", "both")
PAD_X, GAP, PAD_Y, MARGIN = 3, 2, 3, 6
SLICE_TOKENS = 64  # tokens laid out between clock checks (a batch of new labels can take milliseconds)
SLICE_SECONDS = 0.008  # idle layout slice
MARK_COLOR = "#8250df"  # the bar under a marked token
SMALL_PRINT_SCALE = 0.72  # small print (captions under byte groups, ids under tokens) to the token font
MIN_SMALL_PRINT_PX = 11  # ... but never smaller than this (9 px at the default font is unreadable)


class TokenFlowView(QAbstractScrollArea):
    """Wrapped, coloured tokens. Feed it with `set_tokens`."""

    token_clicked = Signal(int)
    token_hovered = Signal(int)
    laid_out = Signal()  # the whole text is laid out (for benchmarks and tests)

    def __init__(self, parent: QWidget | None = None, *, max_lines: int | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._max_lines = max_lines
        self._labels: list[str] = []
        self._ids: list[int] = []
        self._kinds: list[int] = []
        self._breaks: list[int] = []
        self._slots: list[int] = []
        self._differs: Sequence[bool] = ()
        self._marked: Sequence[bool] = ()  # tokens with a bar under them
        self._group_end: dict[int, int] = {}
        self._group_caption: dict[int, str] = {}
        self._in_group: set[int] = set()
        self._mode = "text"
        self._palette: TokenPalette = token_palette()
        self._selected = -1
        self._hovered = -1
        self.painted = range(0)  # the tokens the last paint drew (for tests and diagnostics)
        self._tooltip: Callable[[int], str] | None = None
        self._width_cache: dict[str, int] = {}
        self._slice_timer = QTimer(self, interval=0)
        self._slice_timer.timeout.connect(self._on_slice_timer_timeout)
        self._update_fonts()
        self._reset_layout()

    # -- data -----------------------------------------------------------------------------------

    def set_tokens(self, labels: list[str], ids: list[int], kinds: list[int], breaks: list[int], slots: list[int],
                   *, groups: Sequence[tuple[int, int]] = (), captions: Sequence[str] = (),
                   differs: Sequence[bool] = (), marked: Sequence[bool] = ()) -> None:
        """Show tokens (parallel lists); `groups` are (first, last) runs of byte tokens that build
        one character, with `captions` the character shown under each run."""
        self._labels, self._ids, self._kinds, self._breaks, self._slots = labels, ids, kinds, breaks, slots
        self._differs, self._marked = differs, marked
        self._group_end = {a: b for a, b in groups}
        self._group_caption = {a: c for (a, _), c in zip(groups, captions, strict=False)}
        self._in_group = {i for a, b in groups for i in range(a, b + 1)}
        if self._selected >= len(labels):
            self._selected = -1
        self._reset_layout()

    def clear(self) -> None:
        self.set_tokens([], [], [], [], [])

    @property
    def token_count(self) -> int:
        return len(self._labels)

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown display mode {mode!r}; choose one of {', '.join(MODES)}")
        if mode != self._mode:
            self._mode = mode
            self._reset_layout()

    @property
    def mode(self) -> str:
        return self._mode

    def set_token_palette(self, palette: TokenPalette) -> None:
        self._palette = palette
        self._qcolors = [QColor(c) for c in palette.backgrounds]
        self.viewport().update()

    @property
    def token_palette(self) -> TokenPalette:
        """The colours the tokens are drawn in (`set_token_palette`)."""
        return self._palette

    @property
    def outlined(self) -> list[int]:
        """Indices of the tokens drawn with an outline (``differs`` of `set_tokens`)."""
        return [i for i, d in enumerate(self._differs) if d]

    def set_tooltip_provider(self, provider: Callable[[int], str] | None) -> None:
        self._tooltip = provider

    @property
    def selected(self) -> int:
        return self._selected

    def token_kind(self, index: int) -> int:
        """How token `index` is drawn (`tokviz.core.display.tokens` kinds: UNKNOWN is highlighted)."""
        return self._kinds[index]

    def select(self, index: int) -> None:
        self._selected = index if 0 <= index < len(self._labels) else -1
        if self._selected >= 0:
            self._ensure_visible(self._selected)
        self.viewport().update()

    @property
    def is_laid_out(self) -> bool:
        return self._done >= len(self._labels)

    # -- fonts and metrics -------------------------------------------------------------------

    def _update_fonts(self) -> None:
        self._font = monospace_font(self.font())
        self._small = QFont(self._font)
        token_px = QFontInfo(self._font).pixelSize()
        floor = small_print_px()  # presenter mode: as large as the tokens, and at least this
        if floor:
            self._small.setPixelSize(max(floor, token_px))
        else:  # smaller than the tokens, but not below what reads on a laptop (tiny tokens: their size)
            self._small.setPixelSize(max(round(token_px * SMALL_PRINT_SCALE), min(MIN_SMALL_PRINT_PX, token_px)))
        self._fm = QFontMetrics(self._font)
        self._sfm = QFontMetrics(self._small)
        self._width_cache = {}
        self._qcolors = [QColor(c) for c in self._palette.backgrounds]

    def caption_font(self) -> QFont:
        """The font of the small print: characters under byte groups, ids under tokens."""
        return QFont(self._small)

    def refresh_fonts(self) -> None:
        """Fonts again (presenter mode's small-print floor came or went), and the layout with them."""
        self._update_fonts()
        self._reset_layout()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._update_fonts()
            self._reset_layout()
        elif event.type() == QEvent.Type.PaletteChange:
            self.viewport().update()
        super().changeEvent(event)

    def _text_width(self, label: str, small: bool = False) -> int:
        key = ("\0" + label) if small else label
        w = self._width_cache.get(key)
        if w is None:
            w = self._width_cache[key] = (self._sfm if small else self._fm).horizontalAdvance(label)
        return w

    def _cell_width(self, i: int) -> int:
        mode = self._mode
        if mode == "ids":
            w = self._text_width(str(self._ids[i]))
        else:
            w = self._text_width(self._labels[i])
            if mode == "both":
                w = max(w, self._text_width(str(self._ids[i]), True))
        if self._kinds[i] in (SPECIAL, INSERTED):
            w += 8
        return max(w, 5) + 2 * PAD_X

    def _line_height(self, has_group: bool) -> int:
        h = self._fm.height() + 2 * PAD_Y
        if self._mode == "both":
            h += self._sfm.height()
        if has_group:
            h += self._sfm.height() + 4
        return h + GAP + 2

    # -- lazy layout --------------------------------------------------------------------------

    def _reset_layout(self) -> None:
        self._xs: list[int] = []
        self._line_first: list[int] = []  # first token of each line
        self._line_y: list[int] = []
        self._line_h: list[int] = []
        self._done = 0  # tokens laid out
        self._x = MARGIN
        self._y = MARGIN
        self._line_has_group = False
        self._open_line()
        self._slice_timer.stop()
        self._layout_until(self.verticalScrollBar().value() + self.viewport().height() + 200)
        if not self.is_laid_out:
            self._slice_timer.start()
        else:
            self.laid_out.emit()
        self._update_scrollbar()
        self.viewport().update()

    def _open_line(self) -> None:
        self._line_first.append(self._done)
        self._line_y.append(self._y)
        self._line_h.append(self._line_height(False))
        self._line_has_group = False

    def _close_line(self) -> None:
        self._line_h[-1] = self._line_height(self._line_has_group)
        self._y += self._line_h[-1]
        self._x = MARGIN

    def _layout_until(self, y_limit: int, max_tokens: int | None = None) -> None:
        """Lay out tokens until the line at `y_limit` is complete (or `max_tokens` more)."""
        n = len(self._labels)
        right = max(80, self.viewport().width() - MARGIN)
        stop = n if max_tokens is None else min(n, self._done + max_tokens)
        xs, breaks, group_end, in_group = self._xs, self._breaks, self._group_end, self._in_group
        i = self._done
        while i < stop:
            if self._max_lines is not None and len(self._line_first) > self._max_lines:
                self._done = n  # the rest is not shown
                return
            w = self._cell_width(i)
            last = group_end.get(i)
            width_needed = w if last is None else sum(self._cell_width(j) + GAP for j in range(i, last + 1))
            if self._x + width_needed > right and self._x > MARGIN:
                self._close_line()
                self._done = i
                self._open_line()
                if self._y > y_limit and max_tokens is None:
                    return
            xs.append(self._x)
            self._x += w + GAP
            if i in in_group:
                self._line_has_group = True
            i += 1
            self._done = i
            if breaks[i - 1]:
                for _ in range(min(breaks[i - 1], 2)):
                    self._close_line()
                    self._open_line()
                if self._y > y_limit and max_tokens is None:
                    return
        self._done = i
        self._line_h[-1] = self._line_height(self._line_has_group)

    def _on_slice_timer_timeout(self) -> None:
        # the lines on screen placed already: this slice reaches only below the window
        shown_before = self.is_laid_out or self._y > self.verticalScrollBar().value() + self.viewport().height()
        end = time.perf_counter() + SLICE_SECONDS  # bounded by time: a busy worker slows us down
        while not self.is_laid_out and time.perf_counter() < end:
            self._layout_until(1 << 60, SLICE_TOKENS)
        self._update_scrollbar()
        if self.is_laid_out:
            self._slice_timer.stop()
            self.laid_out.emit()
        if not shown_before:  # lines below the window change no pixel: no repaint for them
            self.viewport().update()

    def content_height(self) -> int:
        """Height of the content (an estimate from the laid-out part until the rest is laid out)."""
        h = self._line_y[-1] + self._line_h[-1] + MARGIN
        if not self.is_laid_out and self._done:
            h = int(h * len(self._labels) / self._done)  # estimate until the rest is laid out
        return h

    def _update_scrollbar(self) -> None:
        sb = self.verticalScrollBar()
        page = self.viewport().height()
        sb.setPageStep(page)
        sb.setSingleStep(self._fm.height() + 2 * PAD_Y)
        sb.setRange(0, max(0, self.content_height() - page))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._reset_layout()
        else:
            self._update_scrollbar()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        self._layout_until(self.verticalScrollBar().value() + self.viewport().height() + 200)
        self.viewport().update()

    # -- geometry -----------------------------------------------------------------------------

    def _line_of(self, i: int) -> int:
        return bisect.bisect_right(self._line_first, i) - 1

    def token_rect(self, i: int) -> QRect:
        """The cell of token `i` in viewport coordinates (lays out up to it if needed)."""
        if i >= self._done:
            self._layout_until(1 << 60, i - self._done + 1)
        line = self._line_of(i)
        top = self._line_y[line] - self.verticalScrollBar().value()
        h = self._fm.height() + 2 * PAD_Y + (self._sfm.height() if self._mode == "both" else 0)
        return QRect(self._xs[i], top, self._cell_width(i), h)

    def index_at(self, pos: QPoint) -> int:
        y = pos.y() + self.verticalScrollBar().value()
        line = bisect.bisect_right(self._line_y, y) - 1
        if line < 0 or line >= len(self._line_first):
            return -1
        first = self._line_first[line]
        end = self._line_first[line + 1] if line + 1 < len(self._line_first) else self._done
        end = min(end, len(self._xs))  # past `max_lines` tokens are not placed
        if first >= end:
            return -1
        i = bisect.bisect_right(self._xs, pos.x(), first, end) - 1
        if i < first:
            return -1
        r = self.token_rect(i)
        return i if r.contains(pos) else -1

    def _ensure_visible(self, i: int) -> None:
        r = self.token_rect(i)
        sb = self.verticalScrollBar()
        if r.top() < 0:
            sb.setValue(sb.value() + r.top() - MARGIN)
        elif r.bottom() > self.viewport().height():
            sb.setValue(sb.value() + r.bottom() - self.viewport().height() + MARGIN)

    # -- painting -----------------------------------------------------------------------------

    def paintEvent(self, event) -> None:
        p = QPainter(self.viewport())
        pal = self.palette()
        clip = event.rect()  # what needs painting: a row of the compare view shows a strip of its view
        p.fillRect(clip, pal.color(QPalette.ColorRole.Base))
        if not self._labels:
            p.setPen(pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
            p.drawText(self.viewport().rect().adjusted(12, 12, -12, -12),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap,
                       self.placeholder())
            return
        top = self.verticalScrollBar().value()
        self._layout_until(top + self.viewport().height() + 200)
        first_line = max(0, bisect.bisect_right(self._line_y, top + clip.top() - 2) - 1)  # 2: a selection frame
        last_line = bisect.bisect_right(self._line_y, top + clip.bottom() + 3)
        if first_line >= len(self._line_first):
            return
        start = self._line_first[first_line]
        end = self._line_first[last_line] if last_line < len(self._line_first) else self._done
        self.painted = range(start, min(end, self._done, len(self._xs)))  # past `max_lines`: not placed
        self._paint_tokens(p, start, self.painted.stop, top)

    def placeholder(self) -> str:
        return "No tokens yet: type or paste text above."

    def _paint_tokens(self, p: QPainter, start: int, end: int, top: int) -> None:
        pal = self._palette
        fg = QColor(pal.text)
        text_h = self._fm.height() + 2 * PAD_Y
        mode = self._mode
        border = QColor(pal.border) if pal.border else None
        diff_pen = QPen(QColor(pal.difference), 2)
        for i in range(start, end):
            line = self._line_of(i)
            y = self._line_y[line] - top
            x = self._xs[i]
            w = self._cell_width(i)
            h = text_h + (self._sfm.height() if mode == "both" else 0)
            rect = QRect(x, y, w, h)
            kind = self._kinds[i]
            label = str(self._ids[i]) if mode == "ids" else self._labels[i]
            if kind in (SPECIAL, INSERTED):  # a badge; in outline when inserted (it covers no text)
                p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                if kind == SPECIAL:
                    p.setBrush(QColor(pal.special_bg))
                    p.setPen(Qt.PenStyle.NoPen)
                else:
                    p.setBrush(Qt.BrushStyle.NoBrush)
                    p.setPen(QPen(QColor(pal.special_bg), 1.5 * highlight_width(), Qt.PenStyle.DashLine))
                p.drawRoundedRect(rect if kind == SPECIAL else rect.adjusted(1, 1, -1, -1), h / 2, h / 2)
                p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
                color = QColor(pal.special_text) if kind == SPECIAL else fg
            elif kind == UNKNOWN:
                p.fillRect(rect, QColor(pal.unknown_bg))
                color = QColor(pal.unknown_text)
            else:
                p.fillRect(rect, self._qcolors[self._slots[i] % len(self._qcolors)])
                color = fg
            if border is not None and kind not in (SPECIAL, INSERTED):
                p.setPen(QPen(border, 1))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(rect.adjusted(0, 0, -1, -1))
            p.setPen(color)
            p.setFont(self._font)
            if mode == "both":
                p.drawText(QRect(x, y + PAD_Y, w, self._fm.height()), Qt.AlignmentFlag.AlignCenter, label)
                p.setFont(self._small)
                p.drawText(QRect(x, y + PAD_Y + self._fm.height(), w, self._sfm.height()),
                           Qt.AlignmentFlag.AlignCenter, str(self._ids[i]))
            else:
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
            if kind == UNKNOWN:
                p.drawLine(x + 2, y + h // 2, x + w - 3, y + h // 2)
            if kind == EMPTY and mode != "ids":
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, "∅")
            if i < len(self._marked) and self._marked[i]:
                p.fillRect(x + 1, y + h - 3, w - 2, 3, QColor(MARK_COLOR))
            if self._differs and i < len(self._differs) and self._differs[i]:
                p.setPen(diff_pen)
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(rect.adjusted(1, 1, -1, -1))
            last = self._group_end.get(i)
            if last is not None and last < self._done:
                self._paint_group(p, i, last, y + h + 2)
            if i == self._selected or i == self._hovered:
                sel = QPen(self.palette().color(QPalette.ColorRole.Highlight),
                           (3 if i == self._selected else 1) * highlight_width())
                p.setPen(sel)
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(rect.adjusted(-1, -1, 0, 0))
        p.end()

    def _paint_group(self, p: QPainter, first: int, last: int, y: int) -> None:
        x0 = self._xs[first]
        x1 = self._xs[last] + self._cell_width(last)
        color = QColor(self._palette.group if self._palette.border else self.palette().color(QPalette.ColorRole.Text))
        p.setPen(QPen(color, 1))
        p.drawLine(x0, y, x1, y)
        p.drawLine(x0, y, x0, y - 3)
        p.drawLine(x1, y, x1, y - 3)
        caption = self._group_caption.get(first, "")
        if caption:
            p.setFont(self._small)
            p.drawText(QRect(x0, y + 1, x1 - x0, self._sfm.height()), Qt.AlignmentFlag.AlignCenter, caption)

    # -- interaction --------------------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            i = self.index_at(event.pos())
            if i >= 0 and self._tooltip is not None:
                QToolTip.showText(event.globalPos(), self._tooltip(i), self.viewport(), self.token_rect(i))
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)

    def mouseMoveEvent(self, event) -> None:
        i = self.index_at(event.position().toPoint())
        if i != self._hovered:
            self._hovered = i
            self.token_hovered.emit(i)
            self.viewport().update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:
        if self._hovered != -1:
            self._hovered = -1
            self.token_hovered.emit(-1)
            self.viewport().update()
        super().leaveEvent(event)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            i = self.index_at(event.position().toPoint())
            if i >= 0:
                self.select(i)
                self.token_clicked.emit(i)
        super().mousePressEvent(event)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Left, Qt.Key.Key_Right) and self._labels:
            step = -1 if key == Qt.Key.Key_Left else 1
            i = max(0, min(len(self._labels) - 1, (self._selected if self._selected >= 0 else -step) + step))
            self.select(i)
            self.token_clicked.emit(i)
            return
        super().keyPressEvent(event)
