"""Panels: one QWidget per module, one job each, grouped by view family (`timeline/`, `token_view/`,
`heatmaps/`, `training/`, `corpus/`), plus the vocabulary, glitch-token and lesson panels.

Each dockable panel subclasses `tokviz.panels.base.Panel` (stable `PANEL_ID`, `TITLE`, preferred
dock area, font-scale aware). Panels share state only through `tokviz.engine.StepModel` and
`tokviz.engine.workspace.Workspace`, never through each other. May import tokviz.engine and
tokviz.core, never tokviz.app.
"""
