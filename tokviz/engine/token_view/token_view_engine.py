"""`TokenViewEngine`: encodes the token view's text with every compared tokenizer, off the GUI thread.

A request names the text and the tokenizers (rows: the trained tokenizer at step k and at its last
step, character- and word-level baselines, loaded pretrained tokenizers). Requests are debounced
(typing schedules one after a pause) and the newest one wins (`BackgroundEngine`). The worker:

1. builds what is missing: the trained `BpeTokenizer` from a snapshot of the timeline's merges,
   the baselines and the base-unit counts from a snapshot of the corpus text;
2. for a long text, encodes the first screen (cut at a chunk-safe line start) and reports it as
   ``partial_ready`` so the view paints within a fraction of a second;
3. encodes the whole text with the reference row, then every other row (labels only for their first
   `COMPARE_CHARS` characters), the round trips, the diagnostics and the batch, and ends with
   ``finished(TokenViewResult)``.

What the view asks for and gets back is in `requests`; `tokenizer_loader` loads tokenizer files for
extra rows.

What this leaves out: drawing (``tokviz.panels.token_view.panel`` and its views).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from tokviz.core import Encoding
from tokviz.core.baselines import CorpusUnits
from tokviz.core.batch import make_batch
from tokviz.core.bpe.tokenizer import BpeTokenizer
from tokviz.core.display.alignment import differing_cuts
from tokviz.core.display.diagnostics import (
    UnknownWords,
    digit_runs,
    leading_space_twins,
    script_counts,
    trailing_whitespace,
    unknown_words,
    unseen_tokens,
)
from tokviz.core.display.tokens import round_trip, token_display, token_labels, token_stats
from tokviz.core.special_tokens import encode_specials_as_text
from tokviz.core.text.split import parse_split
from tokviz.engine.large_text import SAMPLE_CHARS
from tokviz.engine.release import GradualRelease
from tokviz.engine.workers import BackgroundEngine, BackgroundWorker, background_mode

from .requests import BatchResult, Diagnostics, RowResult, RowSpec, TokenViewRequest, TokenViewResult, TrainedSnapshot
from .tokenizer_loader import warm_up

FIRST_SCREEN_CHARS = 12_000  # texts longer than this get a quick first pass
COMPARE_CHARS = 4_000  # comparison rows label (and draw) this much of the text
BATCH_ROWS = 64
BASELINE_CORPUS_CHARS = SAMPLE_CHARS  # baselines and unit counts read at most this much corpus
OOV_CORPUS_CHARS = 1_000_000  # a loaded tokenizer's unknown-token rate reads at most this much corpus
TYPING_DELAY_MS = 120
QUICK_DELAY_MS = 10
RETRY_MS = 15  # a request waiting for the encoder it replaces to stop looks again after this


def first_screen_cut(text: str, limit: int = FIRST_SCREEN_CHARS) -> int:
    """A position near `limit` where a line starts with a non-space character (no chunk of the
    usual split patterns crosses it), or `limit` itself when there is none nearby."""
    pos = text.find("\n", limit)
    while 0 <= pos < limit * 2:
        if pos + 1 < len(text) and not text[pos + 1].isspace():
            return pos + 1
        pos = text.find("\n", pos + 1)
    return limit


def trained_tokenizer(snap: TrainedSnapshot) -> BpeTokenizer:
    return BpeTokenizer(snap.base, snap.merges, parse_split(snap.split), special_tokens=snap.special_tokens,
                        unk_id=snap.unk_id, name="trained")


class TokenViewWorker(BackgroundWorker):
    """Encodes one `TokenViewRequest` (see the module docstring for the stages)."""

    partial_ready = Signal(int, object)  # run id, TokenViewResult with partial=True
    built = Signal(int, object)  # run id, {"trained": (key, tok, counts), "corpus": (version, dict), "oov": ...}

    def __init__(self, run_id: int, request: TokenViewRequest, trained: tuple | None, baselines: tuple | None,
                 oov: tuple | None = None) -> None:
        super().__init__(run_id)
        self.request = request
        self._trained = trained  # (key, tokenizer, counts) from the engine's cache, or None
        self._baselines = baselines  # (version, {"chars": tok, "words": tok, "units": Counter})
        self._oov = oov  # (corpus version, tokenizer, UnknownWords) from the engine's cache, or None

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> tuple[BpeTokenizer | None, dict[int, int], dict]:
        req = self.request
        built = {}
        trained, counts = None, {}
        snap = req.trained
        if snap is not None:
            if self._trained is not None and self._trained[0] == snap.key:
                _, trained, counts = self._trained
            else:
                trained = trained_tokenizer(snap)
                counts = {snap.base.size + r: c for r, c in enumerate(snap.merge_counts)}
                built["trained"] = (snap.key, trained, counts)
        self.check_cancelled()
        baselines = {}
        if req.corpus is not None:
            version, corpus = req.corpus
            if self._baselines is not None and self._baselines[0] == version:
                baselines = self._baselines[1]
            else:
                # counted a slice at a time: one Counter over 5 MB holds the GIL (the window
                # froze for up to ~1.7 s while a 30 MB corpus opened and trained)
                units = CorpusUnits.count([corpus[:BASELINE_CORPUS_CHARS]], should_stop=self.check_cancelled)
                baselines = {"chars": units.char_tokenizer(), "words": units.word_tokenizer(max_size=50_000),
                             "bytes": units.byte_counts, "chars_count": units.chars}
                built["corpus"] = (version, baselines)
        if snap is not None and baselines:
            if snap.base.units == "bytes":
                unit_counts = baselines["bytes"]
                counts = {**counts, **{i: int(unit_counts[i]) for i in range(256)}}
            else:
                cc = baselines["chars_count"]
                counts = {**counts, **{i: cc.get(s, 0) for i, s in enumerate(snap.base.symbols)}}
        if built:
            self.built.emit(self.run_id, built)
        return trained, counts, baselines

    def _tokenizer_of(self, spec: RowSpec, trained, baselines):
        if spec.key in ("step", "final"):
            return trained if spec.tokenizer is None else spec.tokenizer  # a loaded tokenizer
        if spec.key in ("chars", "words"):
            return baselines.get(spec.key)
        return spec.tokenizer

    def _encode(self, tok, text: str, step: int | None, *, drawn: bool = True) -> Encoding:
        """The encoding of `text`; when it is `drawn`, its spans are read first, so a tokenizer
        whose `encode` defers the work runs one pass for ids and spans (not an ids pass first)."""
        if self.request.specials_as_text:
            enc = encode_specials_as_text(tok, text, step=step)
        else:
            enc = tok.encode(text, step=step, allowed_special="all")  # every tokenizer's grid
        if drawn:
            enc.spans  # noqa: B018 - read for its side effect (see the docstring)
        return enc

    @staticmethod
    def _decode(tok, ids) -> str:
        try:
            return tok.decode(ids)
        except Exception:  # noqa: BLE001 - a foreign tokenizer's decode failing is a round-trip finding
            return ""

    # -- the job ------------------------------------------------------------------------------

    def work(self) -> TokenViewResult:
        with background_mode():
            return self._work()

    def _work(self) -> TokenViewResult:
        t0 = time.perf_counter()
        req = self.request
        trained, counts, baselines = self._build()
        specs = [(s, self._tokenizer_of(s, trained, baselines)) for s in req.rows]
        specs = [(s, t) for s, t in specs if t is not None]
        text, ws = req.text, req.show_whitespace
        if not specs:
            return TokenViewResult(req, [], counts=counts, seconds=time.perf_counter() - t0)
        for _, tok in specs:  # on the first request (an empty text too): the first long paste
            warm_up(tok)  # is not the one to wait for the tables
        ref_spec, ref_tok = specs[0]
        if len(text) > FIRST_SCREEN_CHARS * 1.5:
            head = text[: first_screen_cut(text)]
            enc = self._encode(ref_tok, head, ref_spec.step)
            row = RowResult(ref_spec, ref_tok, enc, token_stats(head, enc), token_labels(head, enc, show_whitespace=ws),
                            len(enc.ids))
            self._decorate(row, head)
            self.partial_ready.emit(self.run_id, TokenViewResult(req, [row], partial=True, counts=counts))
            self.check_cancelled()
        rows = []
        for n, (spec, tok) in enumerate(specs):
            enc = self._encode(tok, text, spec.step)
            self.check_cancelled()
            if n == 0:
                labels = token_labels(text, enc, show_whitespace=ws)
            else:
                shown = sum(1 for a, _ in enc.spans[: COMPARE_CHARS * 4] if a < COMPARE_CHARS)
                labels = token_labels(text, enc, show_whitespace=ws, limit=shown)
            row = RowResult(spec, tok, enc, token_stats(text, enc), labels, len(labels.labels))
            self._decorate(row, text)
            row.round_trip = round_trip(text, enc, self._decode(tok, enc.ids))
            rows.append(row)
            self.check_cancelled()
            if n == 0 and len(specs) > 1:  # the main view need not wait for the comparison
                self.partial_ready.emit(self.run_id, TokenViewResult(req, [row], partial=True, counts=counts))
        ref = rows[0]
        ref_spans = ref.encoding.spans
        for row in rows[1:]:
            row.differs = differing_cuts(text, row.encoding.spans[: row.shown], ref_spans)
        result = TokenViewResult(req, rows, counts=counts)
        result.diagnostics = self._diagnostics(text, ref, counts if ref.spec.key in ("step", "final") else {})
        self.check_cancelled()
        result.batch = self._batch(text, ref)
        result.seconds = time.perf_counter() - t0
        return result

    def _decorate(self, row: RowResult, text: str) -> None:
        """Colour slots, byte groups and their captions of the shown tokens, and which are superwords."""
        shown = token_display(text, row.encoding, n_colors=self.request.n_colors, labels=row.labels)
        row.slots, row.groups, row.captions = shown.slots, shown.groups, shown.captions
        superwords = row.spec.superwords
        if superwords:
            row.marked = [i in superwords for i in row.encoding.ids[: len(row.labels.labels)]]

    def _diagnostics(self, text: str, ref: RowResult, counts: dict[int, int]) -> Diagnostics:
        tok, enc = ref.tokenizer, ref.encoding
        has_unk = tok.unk_id is not None
        loaded = ref.spec.tokenizer is not None and ref.spec.key in ("step", "final")
        vocab = tok.vocab()  # one pass over a loaded tokenizer's (200k) vocabulary
        if tok.ids_by_merge_rank and ref.spec.step is not None:  # the merges of step k only
            vocab = vocab[: tok.base_size + ref.spec.step]
        index: dict[bytes, int] = {}
        for i, b in enumerate(vocab):
            if b:  # holes in a foreign vocabulary are None
                index.setdefault(b, i)
        return Diagnostics(
            twins=leading_space_twins(text[:200_000], index.get),
            digits=digit_runs(text, enc),
            trailing=trailing_whitespace(text)[:200],
            scripts=script_counts(text, enc),
            unseen=unseen_tokens(enc, counts) if counts else [(i, enc.ids[i]) for i in enc.unknown[:50]],
            unknown=unknown_words(text, enc) if enc.unknown or has_unk else None,
            corpus_unknown=self._corpus_unknown(tok) if has_unk and loaded else None,
        )

    def _corpus_unknown(self, tok) -> UnknownWords | None:
        """`unknown_words` of the first `OOV_CORPUS_CHARS` of the corpus with the whole model (cached
        by the engine: once per corpus and tokenizer, whatever the step)."""
        if self.request.corpus is None:
            return None
        version, corpus = self.request.corpus
        hit = self._oov
        if hit is not None and hit[0] == version and hit[1] is tok:
            return hit[2]
        sample = corpus[:OOV_CORPUS_CHARS]
        report = unknown_words(sample, self._encode(tok, sample, None), complete=len(sample) == len(corpus))
        self.built.emit(self.run_id, {"oov": (version, tok, report)})
        return report

    def _batch(self, text: str, ref: RowResult) -> BatchResult:
        req = self.request
        lines = [ln for ln in text.splitlines() if ln.strip()][:BATCH_ROWS]
        tok = ref.tokenizer
        rows = [self._encode(tok, ln, ref.spec.step, drawn=False).ids for ln in lines]
        n = tok.n_vocab
        bos, eos, pad = n, n + 1, n + 2  # this tokenizer has none: ids past the vocabulary
        batch = make_batch(rows, pad_id=pad, bos_id=bos if req.bos else None, eos_id=eos if req.eos else None,
                           pad_side=req.pad_side)
        return BatchResult(batch, lines, bos if req.bos else None, eos if req.eos else None, pad)


class TokenViewEngine(BackgroundEngine):
    """Debounced, newest-wins encoding for the token view. Emits `partial_ready` (first screen of
    a long text), then exactly one of `finished`, `cancelled`, `failed` per request."""

    partial_ready = Signal(object)  # TokenViewResult (partial)
    finished = Signal(object)  # TokenViewResult
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pending: TokenViewRequest | None = None
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._trained_cache: tuple | None = None
        self._baseline_cache: tuple | None = None
        self._oov_cache: tuple | None = None
        self.last_result: TokenViewResult | None = None
        self._release = GradualRelease(self)  # the last text's encodings: a million objects to free

    @property
    def is_pending(self) -> bool:
        """True while a request waits for its debounce delay or runs."""
        return self._timer.isActive() or self.is_running or self._pending is not None

    def request(self, request: TokenViewRequest, *, delay_ms: int = QUICK_DELAY_MS) -> None:
        """Encode `request` after `delay_ms` (a newer request before then replaces it)."""
        if self._closed:
            return
        self._pending = request
        self._timer.start(max(0, delay_ms))

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._pending is None or self._closed:
            return
        if self.thread_count:  # one encoder at a time: threads piling up (steps scrubbed faster than
            self._retire_current()  # a long text encodes) would fight the window for the interpreter
            self._timer.start(RETRY_MS)  # the newest request starts once that thread is done
            return
        req, self._pending = self._pending, None
        worker = TokenViewWorker(self._new_run_id(), req, self._trained_cache, self._baseline_cache, self._oov_cache)
        worker.partial_ready.connect(self._on_worker_partial_ready)
        worker.built.connect(self._on_worker_built)
        self._launch(worker)

    @Slot(int, object)
    def _on_worker_partial_ready(self, run_id: int, result: TokenViewResult) -> None:
        if self.is_current(run_id):
            self.partial_ready.emit(result)

    @Slot(int, object)
    def _on_worker_built(self, run_id: int, built: dict) -> None:
        if "trained" in built:
            self._trained_cache = built["trained"]
        if "corpus" in built:
            self._baseline_cache = built["corpus"]
        if "oov" in built:
            self._oov_cache = built["oov"]

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        self._timer.stop()
        return super().shutdown(timeout_ms)

    def _on_result(self, result: object) -> None:
        old, self.last_result = self.last_result, result  # type: ignore[assignment]
        self._release.drop_graph(old)  # freed over the next turns, once the views let it go
        del old
        self.finished.emit(result)

    def _on_cancel(self) -> None:
        self.cancelled.emit()

    def _on_failure(self, message: str) -> None:
        self.failed.emit(message)
