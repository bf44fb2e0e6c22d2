"""What the token view shows during a lesson: the lesson's own text, else a line of its corpus.

A lesson that names no text must still replace what the token view showed before it (a user's
paste, another lesson's sentence): the learner reads the lesson's corpus there instead, or a
short sentence when the lesson has no corpus either.

>>> lesson_view_text(None, "low low low\\nlower lower\\n")
'low low low lower lower'
>>> lesson_view_text("the cat sat", "ignored")
'the cat sat'
"""

from __future__ import annotations

from tokviz.core.text.corpus import looks_like_word_counts, parse_word_counts

DEFAULT_TEXT = "A model reads tokens, one position after another."  # a lesson with no corpus
MAX_CHARS = 160  # a line or two of the token view


def lesson_view_text(text: str | None, corpus: str, *, max_chars: int = MAX_CHARS) -> str:
    """`text` when the lesson gives one; else the start of `corpus` (the words of a word-count
    table), whitespace folded and cut at a word before `max_chars`; else `DEFAULT_TEXT`."""
    if text is not None:
        return text
    head = corpus[: max_chars * 8]  # enough lines for any cut below
    if looks_like_word_counts(head):
        words = list(parse_word_counts(head.rsplit("\n", 1)[0] if len(head) < len(corpus) else head))
    else:
        words = head.split()
    line = ""
    for word in words:
        if len(line) + 1 + len(word) > max_chars:
            break
        line = f"{line} {word}" if line else word
    return line or (words[0][:max_chars] if words else DEFAULT_TEXT)
