"""Byte-pair encoding: the readable reference trainer a reader studies first (`reference`), the
incremental trainer (`trainer`), base units (`units`), settings/training/timeline (`timeline`),
the tokenizer (`tokenizer`) and replay at step k (`replay`).

Core: may import `text`, `algorithm`, `encoding`, `errors`; no Qt.
"""
