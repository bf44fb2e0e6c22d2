"""`TokenViewExports`: the token view's export commands (HTML, JSON, PNG, copy ids), as a mixin.

Reads the panel's ``result`` (the last `TokenViewResult`), ``view`` and ``_token_palette``.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from tokviz.core.display.diagnostics import export_html, export_json, ids_text
from tokviz.core.errors import TokvizError
from tokviz.core.io.safe_files import write_text_atomic
from tokviz.panels.widgets import save_image, warn_export_failed


class TokenViewExports:
    """Export methods mixed into `TokenViewPanel`."""

    # -- export ---------------------------------------------------------------------------------

    def export_html_text(self) -> str:
        ref = self._reference()
        return export_html(self.result.request.text, ref.encoding, self._token_palette,
                           title=f"tokviz · {ref.spec.title}", show_ids=self.view.mode != "text")

    def export_json_data(self) -> dict:
        ref = self._reference()
        data = export_json(self.result.request.text, ref.encoding, name=ref.spec.title, step=ref.spec.step)
        data["comparison"] = [{"tokenizer": r.spec.title, "tokens": r.stats.tokens,
                               "lossless": r.round_trip.ok if r.round_trip else None} for r in self.result.rows]
        return data

    def _reference(self):
        if self.result is None or self.result.reference is None:
            raise RuntimeError("nothing to export yet: train a tokenizer and type some text")
        return self.result.reference

    def save_html(self, path: str | Path) -> None:
        write_text_atomic(path, self.export_html_text())

    def save_json(self, path: str | Path) -> None:
        write_text_atomic(path, json.dumps(self.export_json_data(), ensure_ascii=False, indent=1))

    def save_png(self, path: str | Path) -> bool:
        return save_image(self.view.viewport().grab(), path)

    def copy_ids(self) -> str:
        text = ids_text(self.result.reference.encoding.ids) if self.result and self.result.reference else "[]"
        QGuiApplication.clipboard().setText(text)
        return text

    def _ask_path(self, title: str, suffix: str, filters: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, title, f"tokens.{suffix}", filters)
        return path or None

    @Slot()
    def _on_export_html_triggered(self) -> None:
        if self.result and (path := self._ask_path("Export HTML", "html", "HTML (*.html)")):
            self._export(self.save_html, path)

    @Slot()
    def _on_export_png_triggered(self) -> None:
        if self.result and (path := self._ask_path("Export PNG", "png", "PNG image (*.png)")):
            self._export(self.save_png, path)

    @Slot()
    def _on_export_json_triggered(self) -> None:
        if self.result and (path := self._ask_path("Export JSON", "json", "JSON (*.json)")):
            self._export(self.save_json, path)

    def _export(self, save, path: str) -> None:
        try:
            if save(path) is False:
                raise TokvizError(f"{path}: cannot write the image")
        except (TokvizError, RuntimeError) as exc:
            warn_export_failed(self, "the tokens", exc)
