"""Hugging Face ``tokenizer.json`` run by tokviz's own code: the pipeline (`tokenizer`) and its
components (`normalizers`, `pretokenizers`, `models`, `decoders`).

Core: no Qt.
"""
