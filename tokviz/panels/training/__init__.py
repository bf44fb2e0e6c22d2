"""The training panel: every option, the algorithm choice with its own options, and the status bar
progress.

Panel layer: may import tokviz.engine and tokviz.core, never tokviz.app.
"""
