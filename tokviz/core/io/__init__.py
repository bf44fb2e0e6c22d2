"""Files: tokviz model files (`model_files`), sessions (`session`), tokenizer export to Hugging Face
and tiktoken (`tokenizer_export`), GIF/PNG writing (`gif`) and whole-buffer pipes (`pipes`).

Core: no Qt.
"""
