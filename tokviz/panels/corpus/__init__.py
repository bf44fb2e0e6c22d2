"""The corpus editor: the panel, its code editor with line numbers, and the virtual view of very
large texts.

Panel layer: may import tokviz.engine and tokviz.core, never tokviz.app.
"""
