"""Heatmaps: the reusable pyqtgraph heatmap view, positional encodings and embedding similarity.

Panel layer: may import tokviz.engine and tokviz.core, never tokviz.app.
"""
