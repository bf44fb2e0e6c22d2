"""The token view's part of a saved session: text, mode, whitespace, special tokens as text, palette, batch
options, tab."""

from __future__ import annotations

from tokviz.panels.state_setters import set_checks, set_data, set_tab


def token_view_state(p) -> dict:
    return {"text": p.text(), "mode": p.view.mode, "whitespace": p.whitespace_box.isChecked(),
            "palette": p.palette_key, "tab": p.tabs.currentIndex(), "bos": p.bos_box.isChecked(),
            "eos": p.eos_box.isChecked(), "pad": p.pad_box.currentData(),
            "specials_as_text": p.specials_box.isChecked()}


def restore_token_view(p, d: dict) -> None:
    if isinstance(d.get("text"), str) and d["text"] != p.text():
        p.set_text(d["text"])
    set_data(p.mode_box, d.get("mode"))
    set_data(p.palette_box, d.get("palette"))
    set_data(p.pad_box, d.get("pad"))
    set_checks(d, {"whitespace": p.whitespace_box, "bos": p.bos_box, "eos": p.eos_box,
                   "specials_as_text": p.specials_box})
    set_tab(p.tabs, d)
