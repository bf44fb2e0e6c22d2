"""WordPiece: training (`trainer`), the timeline and model files (`timeline`), and greedy
longest-match-first encoding (`tokenizer`).

Core: may import `text`, `algorithm`, `encoding`, `errors`; no Qt.
"""
