"""Encoding the token view's text with every compared tokenizer off the GUI thread.

Engine layer: QtCore and tokviz.core only.
"""
