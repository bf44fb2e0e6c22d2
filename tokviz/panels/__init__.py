"""Panels: one QWidget per module, one job each (corpus editor, training options, vocabulary...).

Each dockable panel subclasses `tokviz.panels.base.Panel` (stable `PANEL_ID`, `TITLE`, preferred
dock area, font-scale aware). Panels import from `tokviz.engine` and `tokviz.core`, never from
`tokviz.app`.
"""
