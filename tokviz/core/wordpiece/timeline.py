"""WordPiece: a training run in stages, its timeline, and model files (the settings:
`tokviz.core.wordpiece.settings`).

The pieces: `WordPieceSettings` (every option), `WordPieceTraining` (``prepare()`` counts the
corpus, ``steps()`` yields `WordPieceStep` merges, ``run()`` drains them; the same stages as the
BPE `Training`), `WordPieceTimeline` (settings + base symbols + ordered merges: the single source
of truth; step k = the first k merges) and `WordPieceTokenizer` (``timeline.tokenizer()``).
`to_json` / `from_json` turn a timeline into a versioned JSON dict and back.

Words longer than ``max_word_chars`` are left out of training (the encoder turns them into
``[UNK]`` anyway). Id layout: 0 ``[UNK]``, then the special tokens, then the base symbols (plain characters, then
``##`` characters, each sorted by code point), then one id per merge. `vocab_size` counts all of
them. Training rules (score, ties) are in `tokviz.core.wordpiece.trainer`; encoding rules in
`tokviz.core.wordpiece.tokenizer`.

    >>> t = train_wordpiece(WordPieceSettings(merges=3), texts=["hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5])
    >>> [s.text for s in t.steps]
    ['##gs', 'hu', 'hugs']
    >>> t.tokenizer().encode("hugs hug mug").tokens
    [b'hugs', b'hu', b'##g', b'[UNK]']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tokviz.core.algorithm.merge_steps import MergeSteps
from tokviz.core.algorithm.piece_tokenizer import PieceLayout, check_header, need
from tokviz.core.algorithm.records import Segmentation, TreeNode, segment_pieces
from tokviz.core.algorithm.staged import StagedTraining
from tokviz.core.errors import CorpusError, ModelFormatError, SettingsError, TokvizError
from tokviz.core.gc_pause import paused_gc
from tokviz.core.io.checks import is_count

from .compiled import make_trainer
from .corpus import CONTINUATION, base_symbols
from .replay import wordpiece_tree
from .settings import FORMAT_NAME, MAX_WORD_CHARS, WordPieceSettings
from .tokenizer import WordPieceMatch, WordPieceTokenizer, split_form
from .trainer import WordPieceCandidate, WordPieceStep, WordPieceTrainer

FORMAT_VERSION = 1
STEP_COLUMNS = ["left", "right", "count", "left_count", "right_count", "length", "candidates"]
CANDIDATE_COLUMNS = ["left", "right", "count", "left_count", "right_count", "first_chunk", "first_offset"]

__all__ = [
    "CONTINUATION",
    "MAX_WORD_CHARS",
    "WordPieceCandidate",
    "WordPieceMatch",
    "WordPieceSettings",
    "WordPieceStep",
    "WordPieceTimeline",
    "WordPieceTokenizer",
    "WordPieceTrainer",
    "WordPieceTraining",
    "from_json",
    "to_json",
    "train_wordpiece",
]


@dataclass
class WordPieceTimeline(MergeSteps, PieceLayout):
    """Settings + base symbols + ordered merges. Step k means "the first k merges"."""

    settings: WordPieceSettings
    symbols: tuple[str, ...]  # base vocabulary forms ("a", "##a")
    steps: list[WordPieceStep] = field(default_factory=list)
    corpus_length: int = 0  # weighted corpus length in characters, before any merge
    n_chunks: int = 0  # distinct words the trainer saw
    finished: bool = False

    # the StepTimeline protocol's capabilities (tokviz.core.algorithm.protocol)
    algorithm = "wordpiece"
    title = "WordPiece"
    step_noun = "merge"
    has_counts = True
    has_scores = True
    lists_merges = True
    replays_merges = False
    renumbers_vocab = False
    traces_matches = True

    def lattice_explainer(self, step: int) -> None:  # no Unigram lattice
        return None

    @property
    def base_size(self) -> int:
        return len(self.symbols)

    @property
    def vocab_size(self) -> int:
        return self.n_special + self.base_size + self.n_merges

    def token_forms(self) -> list[str]:
        """Vocabulary form of every id: [UNK], specials, base symbols, merges."""
        return ["[UNK]", *self.settings.special_tokens, *self.symbols, *(s.text for s in self.steps)]

    def tokenizer(self) -> WordPieceTokenizer:
        """The tokenizer of this timeline; pass ``step=k`` to its methods to use k merges."""
        return WordPieceTokenizer.from_timeline(self)

    def describe(self) -> list[str]:
        """A few lines summing the run up (the training panel's summary)."""
        n, base = self.n_merges, self.base_size
        lines = [f"WordPiece · {n:,} merges · vocabulary {self.vocab_size:,} tokens "
                 f"({base:,} base + {n:,} merged + {self.n_special} special)"]
        return lines + self.corpus_lines()

    def merge_vocab(self) -> list[bytes]:
        """[UNK], the specials and the base symbols come first, so merges append."""
        return self.token_bytes()

    def step_of(self, token_id: int) -> int | None:
        r = token_id - self.n_special - self.base_size
        return r if 0 <= r < self.n_merges else None

    def new_id_at(self, k: int) -> int | None:
        return self.steps[k - 1].id if 0 < k <= self.n_merges else None

    def segment(self, text: str, k: int, tokenizer: WordPieceTokenizer | None = None) -> Segmentation:
        return segment_pieces(self, tokenizer or self.tokenizer(), text, k)

    def merge_tree(self, token_id: int) -> TreeNode | None:
        return wordpiece_tree(self, token_id) if 0 <= token_id < self.vocab_size else None


def merge_budget(settings: WordPieceSettings, base_size: int) -> int | None:
    """How many merges the settings allow (None: until no pair is left)."""
    if settings.merges is not None:
        return settings.merges
    if settings.vocab_size is None:
        return None
    fixed = 1 + len(settings.special_tokens) + base_size
    if settings.vocab_size < fixed:
        raise SettingsError(
            f"vocabulary size {settings.vocab_size} is too small: [UNK], the special tokens and the "
            f"{base_size} base symbols already take {fixed} ids; choose a size of at least {fixed}"
        )
    return settings.vocab_size - fixed


class WordPieceTraining(StagedTraining):
    """One WordPiece run in stages: `prepare()` (read + count), then iterate `steps()`."""

    collector_free = True

    def _setup(self, counts: dict[str, int], should_stop) -> WordPieceTimeline:
        s = self.settings
        # a word longer than max_word_chars always encodes as [UNK]: nothing to learn from it
        counts = {w: n for w, n in counts.items() if len(w) <= s.max_word_chars}
        if not counts:
            raise CorpusError(
                f"every word is longer than {s.max_word_chars} characters; choose a split that "
                f"cuts the text into words (whitespace, gpt2, ...) or raise the maximum word length"
            )
        symbols = base_symbols(counts)
        self.budget = merge_budget(s, len(symbols))
        first_id = 1 + len(s.special_tokens)
        self._trainer = make_trainer(
            list(counts), list(counts.values()), symbols=symbols, first_id=first_id, min_count=s.min_count
        )
        return WordPieceTimeline(s, tuple(symbols), corpus_length=self._trainer.length, n_chunks=len(counts))

    def _trainer_steps(self) -> Iterator[WordPieceStep]:
        return paused_gc(self._trainer.steps(max_merges=self.budget))


def train_wordpiece(
    settings: WordPieceSettings, *, texts: Sequence[str] = (), table: Mapping[str, int] | None = None
) -> WordPieceTimeline:
    """Train to completion: ``train_wordpiece(WordPieceSettings(vocab_size=1000), texts=[text])``."""
    return WordPieceTraining(settings, texts=texts, table=table).run()


# -- model files --------------------------------------------------------------------------------


def to_json(timeline: WordPieceTimeline) -> dict:
    """The JSON-ready dict of a timeline: ``{"format": "tokviz-wordpiece", "version": 1, ...}``.

    Steps are rows under a column header; scores and token strings are derived, not stored.
    """
    rows = []
    listed: dict[int, list[int]] = {}  # a runner-up's record is shared by the steps it did not change in
    for s in timeline.steps:
        cands = []
        for c in s.candidates:
            row = listed.get(id(c))
            if row is None:
                row = listed[id(c)] = [*c.pair, *c[2:]]  # every field but the score
            cands.append(row)
        rows.append([*s.pair, s.count, s.left_count, s.right_count, s.length, cands])
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "algorithm": "wordpiece",
        "settings": timeline.settings.to_json(),
        "symbols": list(timeline.symbols),
        "corpus_length": timeline.corpus_length,
        "n_chunks": timeline.n_chunks,
        "finished": timeline.finished,
        "steps": {"columns": STEP_COLUMNS, "candidate_columns": CANDIDATE_COLUMNS, "rows": rows},
    }


def _is_int(x: object) -> bool:
    return is_count(x)  # every number in these files is a count, id or length


def from_json(d: object) -> WordPieceTimeline:
    """Rebuild a timeline from `to_json`'s dict, checking every field (`ModelFormatError`)."""
    d = check_header(d, FORMAT_NAME, FORMAT_VERSION)
    try:
        settings = WordPieceSettings.from_json(d["settings"])
        symbols = d["symbols"]
        need(isinstance(symbols, list) and all(isinstance(s, str) for s in symbols), "symbols must be strings")
        kinds = []
        for s in symbols:
            try:
                kinds.append(split_form(s)[0])
            except ValueError as exc:
                raise ModelFormatError(f"corrupt model: {exc}") from None
        steps_d = d["steps"]
        need(steps_d.get("columns") == STEP_COLUMNS, "unknown step columns")
        n_special = 1 + len(settings.special_tokens)
        forms = list(symbols)
        steps = []
        for rank, row in enumerate(steps_d["rows"]):
            need(isinstance(row, list) and len(row) == len(STEP_COLUMNS), f"step {rank} is malformed")
            *nums, cands = row
            need(all(_is_int(x) for x in nums) and isinstance(cands, list), f"step {rank} is malformed")
            a, b, count, lc, rc, length = nums
            n = n_special + len(forms)
            need(n_special <= a < n and n_special <= b < n and kinds[b - n_special], f"step {rank} refers to an unknown or non-continuation id")
            need(count > 0 and lc > 0 and rc > 0, f"step {rank} has a zero count")
            form = forms[a - n_special] + forms[b - n_special][len(CONTINUATION):]
            cand_objs = []
            for c in cands:
                need(isinstance(c, list) and len(c) == len(CANDIDATE_COLUMNS) and all(_is_int(x) for x in c)
                     and c[3] > 0 and c[4] > 0 and c[0] < n and c[1] < n, f"step {rank} has a malformed candidate")
                cand_objs.append(WordPieceCandidate((c[0], c[1]), c[2] / (c[3] * c[4]), *c[2:]))
            steps.append(WordPieceStep(rank, (a, b), n, form.encode("utf-8"), count / (lc * rc), count, lc, rc, length, tuple(cand_objs)))
            forms.append(form)
            kinds.append(kinds[a - n_special])
        corpus_length, n_chunks = d.get("corpus_length", 0), d.get("n_chunks", 0)
        need(_is_int(corpus_length) and _is_int(n_chunks), "bad corpus figures")
        return WordPieceTimeline(settings, tuple(symbols), steps, corpus_length, n_chunks, bool(d.get("finished", True)))
    except TokvizError as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"corrupt model: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFormatError(f"corrupt model: missing or malformed {exc}") from None
