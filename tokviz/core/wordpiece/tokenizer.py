"""`WordPieceTokenizer`: BERT-style greedy longest-match-first encoding, at any step.

Each chunk (word) is encoded on its own. From position 0, take the longest plain piece that is a
prefix of the word; from every later position, the longest continuation piece (``##...``) that
starts there. If at some position no piece matches, the whole word becomes one ``[UNK]`` (BERT's
rule), as does a word longer than `max_word_chars` characters (default 100). Example with the
vocabulary ``un, ##believ, ##able, ##a, ##b, ...``: ``unbelievable`` -> ``un ##believ ##able``
(``unb``, ``unbe``, ... are tried first, longest first, and are not pieces).

The matching is the shared greedy encoder (`tokviz.core.wordpiece.greedy`), with a table per step.
Step k uses the base vocabulary and the first k merges. Decoding follows BERT: a continuation
piece joins the previous token, any other token starts a new word after a space, so
``decode(encode(text).ids) == " ".join(text.split())`` for whitespace splitting when nothing is
unknown. What this leaves out: training (`tokviz.core.wordpiece.trainer`), model files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tokviz.core.algorithm.chunked import ChunkResult
from tokviz.core.algorithm.piece_tokenizer import UNK_ID, PieceTokenizer
from tokviz.core.algorithm.protocol import StepTimeline as WordPieceTimeline  # a `WordPieceTimeline`
from tokviz.core.algorithm.records import UNK_TOKEN
from tokviz.core.errors import EncodeError
from tokviz.core.text.split import Splitter, parse_split

from .corpus import CONTINUATION
from .greedy import GreedyMatcher
from .settings import MAX_WORD_CHARS

_N_VOCABS = 4  # how many step vocabularies stay built


@dataclass(frozen=True, slots=True)
class WordPieceMatch:
    """One greedy match while encoding a word (see `WordPieceTokenizer.explain`)."""

    start: int  # character span of the match in the word
    end: int
    id: int  # the piece's id, or UNK_ID when the word cannot be covered
    token: str  # vocabulary form, e.g. "##able", or "[UNK]"
    tried: tuple[str, ...]  # longer candidates looked up first and not in the vocabulary
    reason: str = ""  # why the word became [UNK] ("" otherwise)


def split_form(form: str) -> tuple[bool, str]:
    """(is continuation, text) of a base symbol: ``"##a"`` -> (True, "a"), ``"a"`` -> (False, "a")."""
    if len(form) == 1:
        return False, form
    if form.startswith(CONTINUATION) and len(form) == len(CONTINUATION) + 1:
        return True, form[len(CONTINUATION):]
    raise ValueError(f"not a base symbol: {form!r} (expected one character or '##' + one character)")


class WordPieceTokenizer(PieceTokenizer):
    """Base symbols + ordered merges (ids after ``[UNK]`` and the special tokens)."""

    def __init__(
        self,
        symbols: Sequence[str],
        merges: Sequence[tuple[int, int]],
        splitter: Splitter,
        *,
        special_tokens: Sequence[str] = (),
        max_word_chars: int = MAX_WORD_CHARS,
        name: str = "wordpiece",
    ) -> None:
        n_special = 1 + len(special_tokens)
        self.symbols = tuple(symbols)
        self.merges = [tuple(m) for m in merges]
        self.max_word_chars = max_word_chars
        self.name = name
        cont = [False] * n_special  # id -> is a continuation piece
        text = [""] * n_special  # id -> piece text without "##"
        for form in self.symbols:
            c, t = split_form(form)
            cont.append(c)
            text.append(t)
        for r, (a, b) in enumerate(self.merges):
            n = len(text)
            if not (n_special <= a < n and n_special <= b < n) or not cont[b]:
                raise EncodeError(f"merge {r} ({a}, {b}) is not a pair of known pieces with a continuation on the right")
            cont.append(cont[a])
            text.append(text[a] + text[b])
        self._cont, self._text = cont, text
        forms = [UNK_TOKEN.encode(), *(s.encode("utf-8") for s in special_tokens)]
        forms += [((CONTINUATION if c else "") + t).encode("utf-8") for c, t in zip(cont[n_special:], text[n_special:])]
        super().__init__(forms, splitter, special_tokens)
        self._vocabs: dict[int, GreedyMatcher] = {}

    @classmethod
    def from_timeline(cls, timeline: WordPieceTimeline) -> WordPieceTokenizer:
        s = timeline.settings
        return cls(
            timeline.symbols,
            timeline.merges(),
            parse_split(s.split),
            special_tokens=s.special_tokens,
            max_word_chars=s.max_word_chars,
        )

    # -- vocabulary ---------------------------------------------------------------------------

    @property
    def n_merges(self) -> int:
        return len(self.merges)

    def _step_key(self, step: int | None) -> int:
        if step is None:
            return len(self.merges)
        return max(0, min(int(step), len(self.merges)))

    def n_vocab_at(self, step: int | None = None) -> int:
        return self.n_special + len(self.symbols) + self._step_key(step)

    def is_continuation(self, token_id: int) -> bool:
        self._check_ids([token_id])
        return self._cont[token_id]

    def _vocab(self, step: int) -> GreedyMatcher:
        """The greedy matcher over the pieces at `step`: plain text -> id at a word's start,
        continuation text -> id after it; the lowest id wins."""
        hit = self._vocabs.get(step)
        if hit is None:
            if len(self._vocabs) >= _N_VOCABS:
                del self._vocabs[next(iter(self._vocabs))]
            plain: dict[str, int] = {}
            cont: dict[str, int] = {}
            for i in range(self.n_special, self.n_vocab_at(step)):
                (cont if self._cont[i] else plain).setdefault(self._text[i], i)
            hit = self._vocabs[step] = GreedyMatcher(plain, cont)
        return hit

    # -- encoding -----------------------------------------------------------------------------

    def _encode_chunk(self, chunk: str, step: int) -> ChunkResult:
        seg = self._vocab(step).segment(chunk, max_chars=self.max_word_chars)
        if seg is None:
            return (UNK_ID,), ((0, len(chunk)),)
        return tuple(seg[0]), tuple(seg[1])

    def explain(self, word: str, *, step: int | None = None) -> list[WordPieceMatch]:
        """The greedy matches for `word` (one chunk), with the longer candidates tried first
        (from the longest piece of the vocabulary, as a reader would try them).

        A word that cannot be covered ends with an ``[UNK]`` entry whose `reason` says why (its
        span is the rest of the word; the encoding is then a single ``[UNK]`` for the word).
        """
        n = len(word)
        if n > self.max_word_chars:
            return [WordPieceMatch(0, n, UNK_ID, UNK_TOKEN, (), f"word longer than {self.max_word_chars} characters")]
        matcher = self._vocab(self._step_key(step))
        ids, spans = matcher.match(word)

        def form(a: int, b: int) -> str:
            return (CONTINUATION if a else "") + word[a:b]

        def tried(a: int, found: int) -> tuple[str, ...]:
            """The longer candidates at `a`, from the longest piece down: none is a piece, or
            greedy matching would have taken it."""
            return tuple(form(a, b) for b in range(min(n, a + matcher.longest), found, -1))

        out = [WordPieceMatch(a, b, t, form(a, b), tried(a, b)) for t, (a, b) in zip(ids, spans)]
        start = spans[-1][1] if spans else 0
        if start < n:
            out.append(WordPieceMatch(start, n, UNK_ID, UNK_TOKEN, tried(start, start),
                                      f"no piece matches at character {start}"))
        return out

    # -- decoding -----------------------------------------------------------------------------

    def _surface(self, token_id: int, first: bool) -> str:
        special = self._special_surface(token_id)
        if special is not None:
            return special if first else " " + special
        if self._cont[token_id]:
            return self._text[token_id]
        return self._text[token_id] if first else " " + self._text[token_id]
