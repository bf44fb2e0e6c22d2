"""WordPiece. Read `reference` first: training by score = count(ab) / (count(a) * count(b)) and
greedy longest-match-first encoding in plain Python. Then the incremental trainer (`trainer`), the
same steps compiled when numba is there (`compiled`: its arrays in `arrays`, its merge loop in
`kernels`), the timeline and model files (`timeline`), the greedy encoder trained and Hugging Face
WordPiece share (`greedy`), and the tokenizer at any step (`tokenizer`).

Core: may import `text`, `algorithm`, `encoding`, `errors`; no Qt.
"""
