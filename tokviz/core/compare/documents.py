"""A multilingual corpus as documents, token premiums between them, and their Gini coefficient.

Splitting (`split_documents`): a document starts at its title, a line with no indentation, at
the start of the text or right after a blank (whitespace-only) line. Body lines are indented;
an unindented line inside a paragraph (a wrapped line) continues the document. In
``udhr2_all.txt`` the blank lines between documents are indented like the text ("   "), while a
few translations written without indentation separate their paragraphs with empty lines: an
empty line therefore starts a new document only once the current one has an indented line.
Some translations there have no title line: they follow the one before after an indented blank
line and an empty one, so a document with indented lines also ends there, and the next starts
at its first (indented) line. That gives 383 documents for the 5.7 MB file, one per translation
(the file's source counts about 380).

Premiums (Petrov et al. 2023, "Language Model Tokenizers Introduce Unfairness Between
Languages"): a document's token count over the reference document's, for parallel texts such as
the UDHR's translations. Gini coefficient of the premiums (the fairness figure of TokEval): the
standard mean absolute difference ``sum_i sum_j |x_i - x_j| / (2 n^2 mean)``, 0 when every
document costs the same, ``(n - 1) / n`` when one document has all the tokens. It does not
depend on the reference: premiums are token counts scaled by one number.

What this leaves out: encoding and metrics (`run`, `metrics`), scripts (`scripts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.errors import TokvizError

# udhr2's English title: the default reference, as the premium literature measures against English
DEFAULT_REFERENCE_TITLE = "Universal Declaration of Human Rights"


@dataclass(frozen=True)
class Document:
    """Chars ``[start, end)`` of a text: one document, numbered from 1, with its title line."""

    number: int
    title: str
    start: int
    end: int
    script: str = "Common"  # dominant Unicode script (`scripts.ScriptCounter`)


def split_documents(text: str) -> list[Document]:
    """The documents of `text` (rule in the module docstring); a text without a title line
    (empty, or indented from the first line) is one document titled by its first words.

    >>> [(d.number, d.title, d.start, d.end) for d in split_documents("A\\n  a1\\n  \\nB\\n  b\\nwrapped\\n")]
    [(1, 'A', 0, 10), (2, 'B', 10, 24)]
    >>> [d.title for d in split_documents("T\\nnot indented\\n\\nstill T\\n")]
    ['T']
    >>> [d.title for d in split_documents("T\\n  body\\n\\nU\\n  more\\n")]
    ['T', 'U']
    """
    splitter = DocumentSplitter()
    return [*splitter.feed(text), splitter.finish()]


class DocumentSplitter:
    """`split_documents` of a text given in pieces, each ending with a line break (but the last):
    `feed` each piece (the documents it ended), then `finish` (the last document). Holds the
    first line of the current document, not the text.

    >>> s = DocumentSplitter()
    >>> [d.title for d in s.feed("A\\n  a1\\n  \\n")] + [d.title for d in s.feed("B\\n  b\\n")] + [s.finish().title]
    ['A', 'B']
    """

    def __init__(self) -> None:
        self.pos = 0  # chars fed so far
        self.indented = False  # the current document has an indented line
        self.prev: str | None = None  # the line before, without its line break
        self.before: str | None = None  # the line before that
        self.start = 0  # of the current document
        self.first_line = ""  # its text up to its first "\n"
        self.number = 1

    def feed(self, piece: str) -> list[Document]:
        ended = []
        offset = self.pos
        if offset == 0:
            self.first_line = piece.split("\n", 1)[0]
        pos, prev, before, indented = self.pos, self.prev, self.before, self.indented
        for line in piece.splitlines(keepends=True):
            body = line.rstrip("\r\n")
            untitled = indented and prev == "" and before and not before.strip()  # "   ", "", then text
            if pos and body.strip() and prev is not None and not prev.strip() \
                    and ((not body[0].isspace() and (prev or indented)) or untitled):
                ended.append(self._end(pos))
                nl = piece.find("\n", pos - offset)
                self.first_line = piece[pos - offset: nl if nl >= 0 else len(piece)]
                indented = body[0].isspace()
            elif body[:1].isspace() and body.strip():
                indented = True
            before, prev = prev, body
            pos += len(line)
        self.pos, self.prev, self.before, self.indented = pos, prev, before, indented
        return ended

    def finish(self) -> Document:
        """The last document (the whole text when it has no title line after its start)."""
        return self._end(self.pos)

    def _end(self, end: int) -> Document:
        first = self.first_line[: end - self.start].strip()
        doc = Document(self.number, first[:200] or f"document {self.number}", self.start, end)
        self.start, self.number = end, self.number + 1
        return doc


def find_reference(documents: Sequence[Document], reference: int | str | None = None) -> int:
    """Index (from 0) of the reference document: a number (from 1), a title (exact, ignoring
    case, else the only title starting with it), or None: the first document titled
    `DEFAULT_REFERENCE_TITLE`, else the first document.

    >>> docs = [Document(1, "Déclaration", 0, 5), Document(2, "Universal Declaration of Human Rights", 5, 9)]
    >>> find_reference(docs), find_reference(docs, 1), find_reference(docs, "décl"), find_reference(docs, "2")
    (1, 0, 0, 1)
    """
    if not documents:
        raise TokvizError("no documents to take a reference from")
    if reference is None:
        for i, d in enumerate(documents):
            if d.title.casefold() == DEFAULT_REFERENCE_TITLE.casefold():
                return i
        return 0
    if isinstance(reference, str) and reference.strip().isdigit():
        reference = int(reference)
    if isinstance(reference, int):
        if not 1 <= reference <= len(documents):
            raise TokvizError(f"reference document {reference} does not exist (documents 1..{len(documents)})")
        return reference - 1
    key = reference.casefold().strip()
    exact = [i for i, d in enumerate(documents) if d.title.casefold() == key]
    if exact:
        return exact[0]
    prefix = [i for i, d in enumerate(documents) if d.title.casefold().startswith(key)]
    if len(prefix) == 1:
        return prefix[0]
    if not prefix:
        raise TokvizError(f"no document is titled {reference!r}; give a document number or a title")
    raise TokvizError(f"{len(prefix)} documents have titles starting with {reference!r}; give more of the title or a number")


def premiums(tokens: Sequence[int], reference: int) -> list[float | None]:
    """Each document's tokens over the reference document's (None: the reference has none).

    >>> premiums([10, 20, 5], 0)
    [1.0, 2.0, 0.5]
    """
    ref = tokens[reference]
    return [t / ref if ref else None for t in tokens]


def gini(values: Sequence[float | None]) -> float | None:
    """Gini coefficient ``sum_i sum_j |x_i - x_j| / (2 n^2 mean)`` of the values that are not
    None; None for no values or a zero mean.

    >>> gini([1, 1, 1]), round(gini([0, 0, 1]), 6), gini([]), gini([2.0, None])
    (0.0, 0.666667, None, 0.0)
    """
    x = np.sort(np.array([v for v in values if v is not None], dtype=np.float64))
    n = len(x)
    if n == 0 or x.sum() <= 0:
        return None
    # the double sum over sorted values: sum_i (2i - n - 1) x_i, i from 1
    i = np.arange(1, n + 1)
    return float(((2 * i - n - 1) * x).sum() / (n * x.sum())) + 0.0
