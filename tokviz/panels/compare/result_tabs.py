"""`ResultTabs`: the Compare panel's result tabs, as tall as the panel lets them be.

A tab whose status line wraps makes a tab widget report a height for its width, and Qt's box layout
takes that height (the tab's preferred height, its charts' 480 px included) as the least the tabs
may get: on a dock shorter than that (a 720-line projector in presenter mode) the panel scrolls or
the rows above are squeezed. The tabs report none, so their minimum is what their pages need; each
page still wraps its own lines inside.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget


class ResultTabs(QTabWidget):
    """A `QTabWidget` whose minimum height never grows with its current page's wrapped text."""

    def hasHeightForWidth(self) -> bool:
        return False
