"""Frames of an exported animation: a widget rendered sharp into a fixed-size image with a caption,
images as numpy arrays, and the frames encoded as a GIF or numbered PNG files.

Used by `AnimationExporter` (the window) and ``tokviz animate`` (offscreen). What this leaves out:
choosing steps and driving the window (`animation`), the dialog (`animation_dialog`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter, QPalette, QPixmap, QRegion
from PySide6.QtWidgets import QWidget

from tokviz.core import TokvizError
from tokviz.core.io.gif import write_gif, write_png
from tokviz.core.io.safe_files import write_atomic
from tokviz.core.errors import Cancelled

MAX_UPSCALE = 2.0  # a grabbed image is enlarged at most this much (more only blurs)
MAX_RENDER_SCALE = 4.0  # small panels are rendered at most this much larger (sharp)


def image_to_array(image: QImage) -> np.ndarray:
    """``(h, w, 3)`` uint8 RGB copy of a QImage."""
    img = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=bpl * h).reshape(h, bpl)
    return buf[:, :w * 3].reshape(h, w, 3).copy()


def caption_font(caption: str, width: int, height: int) -> QFont:
    """A bold font about 1/16 of the frame high (readable on a slide), smaller if `caption` would
    not fit the width."""
    font = QFont()
    font.setBold(True)
    size = max(9, height // 16)
    font.setPixelSize(size)
    while size > 9 and QFontMetrics(font).horizontalAdvance(caption) > width - 16:
        size -= 1
        font.setPixelSize(size)
    return font


def caption_strip(caption: str, width: int, height: int) -> int:
    """Height in pixels of the caption strip at the bottom of a frame (0 without a caption)."""
    return QFontMetrics(caption_font(caption, width, height)).height() * 3 // 2 if caption else 0


def fit_image(image: QImage, width: int, height: int, background: QColor, *, caption: str = "",
              color: QColor | None = None) -> QImage:
    """`image` scaled (keeping its aspect) onto a ``width x height`` canvas, with `caption` in a
    strip at the bottom (shrunk to fit the width, elided if it still does not)."""
    out = QImage(width, height, QImage.Format.Format_RGB32)
    out.fill(background)
    p = QPainter(out)
    strip = caption_strip(caption, width, height)
    if caption:
        font = caption_font(caption, width, height)
        p.setFont(font)
        p.setPen(color if color is not None else QColor("#000000"))
        text = QFontMetrics(font).elidedText(caption, Qt.TextElideMode.ElideRight, width - 16)
        p.drawText(QRect(8, height - strip, width - 16, strip),
                   Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextSingleLine, text)
    scale = min(width / image.width(), (height - strip) / image.height(), MAX_UPSCALE)
    scaled = image.scaled(max(1, round(image.width() * scale)), max(1, round(image.height() * scale)),
                          Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
    p.drawImage((width - scaled.width()) // 2, (height - strip - scaled.height()) // 2, scaled)
    p.end()
    return out


def render_crisp(widget: QWidget, size: tuple[int, int], width: int, height: int,
                 origin: tuple[int, int] = (0, 0)) -> QImage:
    """The `size` (logical pixels) of `widget` from `origin`, rendered at the scale that fills a
    ``width x height`` area (at most `MAX_RENDER_SCALE`): text stays sharp instead of being
    enlarged afterwards."""
    w, h = size
    scale = max(1.0, min(width / w, height / h, MAX_RENDER_SCALE))
    pixmap = QPixmap(max(1, round(w * scale)), max(1, round(h * scale)))
    pixmap.setDevicePixelRatio(scale)
    pixmap.fill(widget.palette().color(QPalette.ColorRole.Base))
    widget.render(pixmap, QPoint(0, 0), QRegion(origin[0], origin[1], w, h))
    image = pixmap.toImage()
    image.setDevicePixelRatio(1.0)
    return image


def used_size(view, width: int, height: int) -> tuple[int, int]:
    """(w, h) of a `TokenFlowView`'s grab that holds tokens (at least 1 x 1)."""
    margin = view.frameWidth() + 6
    n = min(view.token_count, 5000)
    right = max((view.token_rect(i).right() for i in range(n)), default=0) + margin
    return max(1, min(width, right)), max(1, min(height, view.content_height() + margin))


def frame_path(folder: Path, i: int) -> Path:
    """The file of frame `i` (from 0) of a PNG sequence: ``frame_0001.png`` ..."""
    return folder / f"frame_{i + 1:04d}.png"


def encode_frames(frames: list[np.ndarray], spec, *, should_stop, progress) -> str:
    """Worker: write the GIF or the PNG sequence of an `AnimationSpec`; returns the path written."""
    if spec.format == "gif":
        data = write_gif(frames, spec.ms_per_frame, loop=spec.loop, should_stop=should_stop, progress=progress)
        write_atomic(Path(spec.path), data)
        return str(spec.path)
    folder = Path(spec.path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TokvizError(f"{folder}: cannot create the folder ({exc.strerror or exc})") from None
    for i, frame in enumerate(frames):
        if should_stop():
            raise Cancelled()
        write_atomic(frame_path(folder, i), write_png(frame))
        progress("Writing PNG files", (i + 1) / len(frames))
    return str(folder)
