"""Bundled data: sample corpora, icons and lesson files (read with importlib.resources)."""
