"""``tokviz screenshot``: every panel rendered offscreen in both themes, for the README.

App layer: may import panels, engine and core.
"""
