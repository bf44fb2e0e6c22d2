"""Tokenizer files: one reader per format, each giving a neutral description of the model it holds.

Read `registry` first: the formats in the order they are recognised (by content, never by name):
minbpe ``.model`` (`minbpe`), GPT-2's ``vocab.bpe`` + ``encoder.json`` (`data_gym`), JSON files
(`json_files`: tokviz models, `tokviz_json`; Hugging Face ``tokenizer.json``; Mistral's
``tekken.json``, `tekken`; ``encoder.json``), ``.tiktoken`` (`tiktoken`, with OpenAI's pinned
encodings in `openai_encodings`) and SentencePiece ``.model`` (`sentencepiece`). A reader knows
bytes, never an encoder: it gives a description (`descriptions`: `RankedVocab`, `MergeList`,
`PipelineJson`, `SentencePieceModel`, `TokvizModel`) that the loader (`tokviz.core.loading`) turns into a tokenizer.

Core: imports `io`, `text`, `errors` only; nothing here imports numpy until a SentencePiece file is read.
"""
