"""The token view: coloured tokens flowing like text, the compare rows, diagnostics, exports and
the "Add row" menu.

Panel layer: may import tokviz.engine and tokviz.core, never tokviz.app.
"""
