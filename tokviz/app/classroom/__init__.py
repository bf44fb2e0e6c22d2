"""The classroom: presenter mode, guided lessons played on the window, animation export.

App layer: may import panels, engine and core.
"""
