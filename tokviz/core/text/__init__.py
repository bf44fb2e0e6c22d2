"""Text in: reading corpora (`corpus`), pre-tokenization (`split`) and counting the deduplicated
chunks training works on (`chunks`).

Core: pure Python + regex, no Qt; imports nothing else of tokviz but `errors`.
"""
