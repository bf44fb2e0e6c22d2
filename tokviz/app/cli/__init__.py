"""The ``tokviz`` command line: `main` dispatches to train, encode, decode, merges, export, lesson,
animate and screenshot.

Imports no Qt itself: only the commands that open a window (gui, lesson, animate, screenshot)
load the app lazily.
"""
