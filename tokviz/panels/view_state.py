"""The per-panel view state a session saves and restores, as plain JSON dicts.

`view_state(panel)` and `restore_view_state(panel, d)` use a panel's own ``view_state()`` /
``restore_view_state(d)`` methods when it has them, else its family's state functions, keyed by
``PANEL_ID`` (`tokviz.panels.token_view.state`, `tokviz.panels.timeline.state`,
`tokviz.panels.chat.state`): each family knows
its own widgets. Restoring ignores keys that are missing or malformed.

What this leaves out: the window-level state (dock layout, theme, step): ``tokviz.app.session_ops``.
"""

from __future__ import annotations

from .base import Panel
from .chat.state import chat_state, restore_chat
from .timeline.state import restore_timeline, timeline_state
from .token_view.state import restore_token_view, token_view_state

STATES = {"token_view": (token_view_state, restore_token_view), "timeline": (timeline_state, restore_timeline),
          "chat": (chat_state, restore_chat)}


def view_state(panel: Panel) -> dict | None:
    """The panel's view state, or None if it has nothing to save."""
    own = getattr(panel, "view_state", None)
    if callable(own):
        return own()
    pair = STATES.get(panel.PANEL_ID)
    return pair[0](panel) if pair else None


def restore_view_state(panel: Panel, d: dict) -> None:
    own = getattr(panel, "restore_view_state", None)
    if callable(own):
        own(d)
    elif panel.PANEL_ID in STATES:
        STATES[panel.PANEL_ID][1](panel, d)
