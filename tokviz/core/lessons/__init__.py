"""Guided lessons: the lesson files (`files`) and the numbers behind each lesson's chart (`figures`).

Core: pure Python + numpy + regex, no Qt.
"""
