"""How tokens are shown: labels with visible whitespace and byte tokens (`tokens`), colours
(`palette`), and diagnostics with HTML/JSON export (`diagnostics`).

Core: no Qt; panels draw from these.
"""
