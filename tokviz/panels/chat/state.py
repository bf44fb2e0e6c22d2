"""The Chat view's part of a saved session: the model folder, the messages and the switches.

Restoring skips what is missing or malformed (messages that are not a conversation, a folder that
is gone) and keeps the rest.
"""

from __future__ import annotations

from pathlib import Path

from tokviz.core.chat import MessagesError, check_messages
from tokviz.panels.state_setters import set_checks


def chat_state(p) -> dict:
    return {"folder": str(p.model.folder) if p.model is not None else None, "messages": p.messages(),
            "generation_prompt": p.generation_box.isChecked(), "specials_as_text": p.specials_box.isChecked(),
            "whitespace": p.whitespace_box.isChecked()}


def restore_chat(p, d: dict) -> None:
    set_checks(d, {"generation_prompt": p.generation_box, "specials_as_text": p.specials_box,
                   "whitespace": p.whitespace_box})
    try:
        p.set_messages(check_messages(d.get("messages"), "session messages"))
    except MessagesError:
        pass
    folder = d.get("folder")
    if isinstance(folder, str) and Path(folder).is_dir():
        p.open_folder(folder)
