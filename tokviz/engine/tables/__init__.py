"""Virtual item models (QAbstractTableModel) over the current model: merges, vocabulary, glitch
findings, and the read-only record table they share.

Engine layer: QtCore and tokviz.core only.
"""
