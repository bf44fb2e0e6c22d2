"""Files: tokviz model files (`model_files`), sessions (`session`), tokenizer export to Hugging Face
and tiktoken (`tokenizer_export`) and GIF/PNG writing (`gif`).

Core: no Qt.
"""
