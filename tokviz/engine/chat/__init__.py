"""Rendering the Chat view's conversation off the GUI thread: loading a model folder, rendering,
linting and preparing the tokens for display.

Engine layer: QtCore and tokviz.core only.
"""
