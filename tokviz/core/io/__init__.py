"""File plumbing that knows no algorithm: bounded reads of regular files, atomic writes and the one
JSON parser (`safe_files`), checks of numbers read from files (`checks`) and GIF/PNG writing (`gif`).

What tokviz saves (model files, sessions, exports) is in `tokviz.core.saved`, a floor higher.
Core: no Qt.
"""
