"""Themes and the global font scale, applied to the whole application.

`Appearance` owns the theme choice (``system``, ``light``, ``dark``; "system" follows the
desktop's colour scheme and its changes) and the font scale (Ctrl+= / Ctrl+- / Ctrl+0). Both are
applied application-wide (the Fusion style, `OutlinedIndicatorStyle` when high-contrast; the
palette; `QApplication.setFont`), so every panel, present or future, follows without code of its own; panels only read the palette when painting and
rebuild monospace fonts on `FontChange` (see `tokviz.panels.base`). New palettes (for example a
high-contrast classroom palette) are added to `PALETTES`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory

from tokviz.engine.settings import THEMES, AppSettings, clamp_font_scale
from tokviz.panels.fonts import with_fallbacks

ZOOM_STEP = 1.1
Role = QPalette.ColorRole
Group = QPalette.ColorGroup


def _palette(colors: dict[Role, str], disabled: dict[Role, str]) -> QPalette:
    pal = QPalette()
    for role, value in colors.items():
        pal.setColor(role, QColor(value))
    for role, value in disabled.items():
        pal.setColor(Group.Disabled, role, QColor(value))
    return pal


def light_palette() -> QPalette:
    return _palette(
        {
            Role.Window: "#f3f4f6", Role.WindowText: "#1f2328", Role.Base: "#ffffff",
            Role.AlternateBase: "#f6f8fa", Role.ToolTipBase: "#fffbe6", Role.ToolTipText: "#1f2328",
            Role.PlaceholderText: "#6e7781", Role.Text: "#1f2328", Role.Button: "#f6f8fa",
            Role.ButtonText: "#1f2328", Role.BrightText: "#cf222e", Role.Light: "#ffffff",
            Role.Midlight: "#eaeef2", Role.Mid: "#c8d1da", Role.Dark: "#8c959f", Role.Shadow: "#6e7781",
            Role.Highlight: "#0969da", Role.HighlightedText: "#ffffff", Role.Link: "#0969da",
            Role.LinkVisited: "#8250df",
        },
        {Role.Text: "#8c959f", Role.WindowText: "#8c959f", Role.ButtonText: "#8c959f",
         Role.Highlight: "#afb8c1", Role.Base: "#f6f8fa"},
    )


def dark_palette() -> QPalette:
    return _palette(
        {
            Role.Window: "#1f2329", Role.WindowText: "#e6edf3", Role.Base: "#161a1f",
            Role.AlternateBase: "#1c2128", Role.ToolTipBase: "#2d333b", Role.ToolTipText: "#e6edf3",
            Role.PlaceholderText: "#7d8590", Role.Text: "#e6edf3", Role.Button: "#2a3038",
            Role.ButtonText: "#e6edf3", Role.BrightText: "#ff7b72", Role.Light: "#3d444d",
            Role.Midlight: "#323941", Role.Mid: "#262c33", Role.Dark: "#111418", Role.Shadow: "#050607",
            Role.Highlight: "#2f6feb", Role.HighlightedText: "#ffffff", Role.Link: "#4493f8",
            Role.LinkVisited: "#ab7df8",
        },
        {Role.Text: "#6e7681", Role.WindowText: "#6e7681", Role.ButtonText: "#6e7681",
         Role.Highlight: "#3d444d", Role.Base: "#1c2128"},
    )


def high_contrast_palette(dark: bool) -> QPalette:
    """Presenter mode: pure black on white (or white on black), a saturated highlight."""
    fg, bg, alt, hl = (("#ffffff", "#000000", "#1a1a1a", "#ffd400") if dark
                       else ("#000000", "#ffffff", "#eeeeee", "#0033cc"))
    return _palette(
        {
            Role.Window: bg, Role.WindowText: fg, Role.Base: bg, Role.AlternateBase: alt,
            Role.ToolTipBase: bg, Role.ToolTipText: fg, Role.PlaceholderText: fg, Role.Text: fg,
            Role.Button: alt, Role.ButtonText: fg, Role.BrightText: "#ff0000" if not dark else "#ff6666",
            Role.Light: alt, Role.Midlight: alt, Role.Mid: fg, Role.Dark: fg, Role.Shadow: fg,
            Role.Highlight: hl, Role.HighlightedText: "#000000" if dark else "#ffffff", Role.Link: hl,
            Role.LinkVisited: hl,
        },
        {Role.Text: "#808080", Role.WindowText: "#808080", Role.ButtonText: "#808080"},
    )


PE = QStyle.PrimitiveElement
OUTLINED = {PE.PE_IndicatorCheckBox: "box", PE.PE_IndicatorRadioButton: "round", PE.PE_FrameLineEdit: "frame",
            PE.PE_Frame: "frame"}


class OutlinedIndicatorStyle(QProxyStyle):
    """Fusion with check boxes, radio buttons, text fields, spin boxes and framed views outlined
    in the text colour: the style of the high-contrast palettes (presenter mode).

    Fusion outlines them in the window colour made darker: invisible on the black of the dark
    high-contrast palette (and faint on its white). Installed only with those palettes: its
    drawing calls into Python for every primitive of every paint, which halved the speed at which
    item views paint. Presenter mode switches it at the normal font size (high contrast on before
    its big font, off after it): a switch at the presenter's size left Qt's cached combo box
    sizes there."""

    outlined = True

    def drawPrimitive(self, element, option, painter, widget=None) -> None:
        super().drawPrimitive(element, option, painter, widget)
        shape = OUTLINED.get(element)
        if shape is not None and (shape != "frame" or option.rect.height() > 4):
            _outline(painter, option, shape)

    def drawComplexControl(self, control, option, painter, widget=None) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if control == QStyle.ComplexControl.CC_SpinBox and option.frame:
            _outline(painter, option, "frame")


PLAIN_STYLE = "tokviz_fusion"  # the object name of the plain Fusion style the theme installs


def apply_style(app: QApplication, outlined: bool) -> None:
    """Fusion, outlined (`OutlinedIndicatorStyle`) or plain; nothing where Fusion is missing."""
    style = app.style()
    if "Fusion" not in QStyleFactory.keys() or (
            isinstance(style, OutlinedIndicatorStyle) if outlined else style.objectName() == PLAIN_STYLE):
        return
    if outlined:
        app.setStyle(OutlinedIndicatorStyle("Fusion"))
    else:
        plain = QStyleFactory.create("Fusion")
        plain.setObjectName(PLAIN_STYLE)
        app.setStyle(plain)


def _outline(painter: QPainter, option, shape: str) -> None:
    """Draw the outline of `option.rect` (a box, a circle, or a thin frame) in the text colour."""
    width = 1.0 if shape == "frame" else max(1.5, option.rect.height() / 9)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, shape != "frame")
    painter.setPen(QPen(option.palette.color(Role.Text), width))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    r = option.rect.toRectF().adjusted(width / 2, width / 2, -width / 2, -width / 2)
    if shape == "round":
        painter.drawEllipse(r)
    else:
        painter.drawRect(r)
    painter.restore()


_base_font: QFont | None = None

PALETTES: dict[str, Callable[[], QPalette]] = {"light": light_palette, "dark": dark_palette}


def system_theme() -> str:
    """``dark`` if the desktop uses a dark colour scheme, else ``light``."""
    hints = QGuiApplication.styleHints()
    return "dark" if hints.colorScheme() == Qt.ColorScheme.Dark else "light"


def resolve_theme(setting: str) -> str:
    return system_theme() if setting == "system" else setting


class Appearance(QObject):
    """Theme and font scale of the application, stored in `AppSettings`."""

    theme_changed = Signal(str)  # the resolved theme: "light" or "dark"
    font_scale_changed = Signal(float)

    def __init__(self, app: QApplication, settings: AppSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.app = app
        self.settings = settings
        global _base_font
        if _base_font is None:  # the font before any scaling (one per process)
            _base_font = QFont(app.font())
        self._base_font = QFont(_base_font)
        self._theme = settings.theme()
        self._scale = settings.font_scale()
        app.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)
        self._apply_theme()
        self._apply_font()

    # -- theme ------------------------------------------------------------------------------

    @property
    def theme(self) -> str:
        """The choice: ``system``, ``light`` or ``dark``."""
        return self._theme

    @property
    def resolved_theme(self) -> str:
        return resolve_theme(self._theme)

    def set_theme(self, theme: str, *, save: bool = True) -> None:
        if theme not in THEMES:
            raise ValueError(f"unknown theme {theme!r}; choose one of {', '.join(THEMES)}")
        self._theme = theme
        if save:
            self.settings.set_theme(theme)
        self._apply_theme()

    @property
    def high_contrast(self) -> bool:
        return getattr(self, "_high_contrast", False)

    def set_high_contrast(self, on: bool) -> None:
        """Presenter mode: the high-contrast variant of the current theme (not saved)."""
        self._high_contrast = bool(on)
        self._apply_theme()

    def _apply_theme(self) -> None:
        resolved = self.resolved_theme
        apply_style(self.app, self.high_contrast)
        if self.high_contrast:
            self.app.setPalette(high_contrast_palette(resolved == "dark"))
        else:
            self.app.setPalette(PALETTES[resolved]())
        self.app.setProperty("tokviz_theme", resolved)
        self.theme_changed.emit(resolved)

    @Slot(Qt.ColorScheme)
    def _on_color_scheme_changed(self, _scheme) -> None:
        if self._theme == "system":
            self._apply_theme()

    # -- font scale -------------------------------------------------------------------------

    @property
    def font_scale(self) -> float:
        return self._scale

    def set_font_scale(self, scale: float, *, save: bool = True) -> None:
        scale = round(clamp_font_scale(scale), 3)
        if scale == self._scale:
            return
        self._scale = scale
        if save:
            self.settings.set_font_scale(scale)
        self._apply_font()

    def zoom_in(self) -> None:
        self.set_font_scale(self._scale * ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_font_scale(self._scale / ZOOM_STEP)

    def reset_zoom(self) -> None:
        self.set_font_scale(1.0)

    def _apply_font(self) -> None:
        font = with_fallbacks(self._base_font)  # emoji, CJK, other scripts: the bundled fonts
        if font.pointSizeF() > 0:
            font.setPointSizeF(self._base_font.pointSizeF() * self._scale)
        else:
            font.setPixelSize(max(6, round(self._base_font.pixelSize() * self._scale)))
        self.app.setFont(font)
        # now, not later: hidden widgets get the font in posted events, and a window resized before
        # they arrive (leaving presenter mode) would be held to their old, larger minimum sizes
        self.app.sendPostedEvents(None, QEvent.Type.ApplicationFontChange)
        self.font_scale_changed.emit(self._scale)
