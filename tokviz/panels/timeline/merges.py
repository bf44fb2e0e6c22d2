"""`MergeParts`: the merge timeline's views for timelines made of merges (BPE, WordPiece, loaded
tokenizers): the winning pair and its competitors at step k, the merge tree and word trace, the
counts over all steps, the merge table's selection.

The panel asks whichever parts fit the current timeline (`lists_merges`: these; else
`UnigramParts`, which shows rounds); both answer the same calls (`tokenizer`, `sync`, `refresh`,
`trace`, `show_piece`, `corpus_caption`, `update_chart`), so the panel has no per-algorithm branches.
While a run is followed live (or the user moves the step), `refresh` is given a phase and updates a
quarter of the views per call.
"""

from __future__ import annotations

import weakref
from functools import partial

from PySide6.QtCore import QObject

from tokviz.core.bpe.replay import WindowSegmenter, series
from tokviz.core.display.tokens import visible_token

RECENT_TOKENIZERS = 3  # the models a user switches between


class MergeParts(QObject):
    """The panel's own widgets (candidates, provenance, chart, merge table) driven for step k."""

    def __init__(self, panel) -> None:
        super().__init__(panel)
        self.panel = panel
        self._tokenizer = None
        # the tokenizers of the last few timelines shown: switching back to a model reuses its
        # tokenizer (and the encodings it cached) instead of building it again on the GUI thread.
        # The timeline is held weakly: a model the app lets go takes its tokenizer with it.
        self._recent: dict[int, tuple[weakref.ref, object]] = {}  # id(timeline) -> (timeline, tokenizer)
        # and the corpus window's segmenter of each (switching back re-encodes nothing), gone with it
        self._windows: dict[int, WindowSegmenter] = {}  # id(timeline) -> segmenter
        self._window: WindowSegmenter | None = None  # for a tokenizer not among `_recent`'s

    def reset(self) -> None:
        self._tokenizer = None

    def tokenizer(self, k: int):
        """The timeline's tokenizer, rebuilt when merges beyond it arrive (None with no timeline)."""
        tl = self.panel.step_model.timeline
        if tl is None:
            self._tokenizer = None
        elif self._tokenizer is None or self._tokenizer.n_merges < k:
            reused = self._reused(tl)
            if reused is None:
                held = self._recent.get(id(tl))
                earlier = held[1] if held is not None and held[0]() is tl else None  # made at fewer merges
                reused = tl.tokenizer() if earlier is None else tl.tokenizer_after(earlier)
            self._tokenizer = reused
            self._remember(tl, self._tokenizer)
        return self._tokenizer

    def _remember(self, tl, tokenizer) -> None:
        key = id(tl)
        self._recent.pop(key, None)
        self._recent[key] = (weakref.ref(tl, partial(self._forget, key)), tokenizer)
        while len(self._recent) > RECENT_TOKENIZERS:
            self._windows.pop(next(iter(self._recent)), None)
            del self._recent[next(iter(self._recent))]

    def _forget(self, key: int, gone: weakref.ref) -> None:
        held = self._recent.get(key)
        if held is not None and held[0] is gone:
            del self._recent[key]
            self._windows.pop(key, None)

    def window_segmenter(self, tok, window: str) -> WindowSegmenter:
        """The corpus window's segmenter for `tok`: the one kept with the current timeline when it
        shows this `window` with `tok` or a tokenizer `tok` extends (a run moving on), else a new
        one (which encodes the window: 20-40 ms on the GUI thread under load). Kept per recent
        timeline, so switching back to a model finds its window already segmented."""
        tl = self.panel.step_model.timeline
        held = self._recent.get(id(tl))
        kept = held is not None and held[1] is tok
        seg = self._windows.get(id(tl)) if kept else self._window
        if seg is None or seg.text != window or not seg.follow(tok):
            seg = WindowSegmenter(tok, window)
        if kept:
            self._windows[id(tl)] = seg
        else:
            self._window = seg
        return seg

    def _reused(self, tl):
        """The tokenizer made earlier for `tl`, if it still has every merge of `tl`."""
        held = self._recent.get(id(tl))
        if held is None or held[0]() is not tl or held[1].n_merges != getattr(tl, "n_merges", None):
            return None
        return held[1]

    def sync(self, k: int) -> None:
        """Give the provenance view the current timeline, vocabulary and step (before a refresh)."""
        p = self.panel
        p.provenance.set_state(p.step_model.timeline, self.tokenizer(k), p.vocab, k)

    def refresh(self, k: int, phase: int | None = None) -> None:
        """Show step k; a `phase` (see `RefreshPacing`) updates only its part: 0 the merge table,
        1 the candidates and provenance, 2 the corpus, 3 the chart's cursor."""
        p = self.panel
        tl = p.step_model.timeline
        if phase in (None, 0):
            p.merge_model.catch_up()
            p.update_selection(k)
        if phase in (None, 1):
            p.candidates_view.show_step(tl, k, p.vocab)
            p.provenance.set_state(tl, self.tokenizer(k), p.vocab, k)
        if phase in (None, 2):
            p.show_corpus_at(self.tokenizer(k), k)
        if phase in (None, 3):
            p.chart.set_cursor(k)

    def trace(self, word: str) -> list[str]:
        self.sync(self.panel.step_model.step)
        self.panel.provenance.set_word(word)
        return self.panel.provenance.trace_lines()

    def show_piece(self, token_id: int, vocab: list[bytes], *, jump: bool = False) -> None:
        """Draw the merge tree of `token_id`; with `jump` (a merged token) go to the step that made it."""
        p = self.panel
        self.sync(p.step_model.step)
        p.provenance.show_token(token_id)
        r = p.step_model.timeline.step_of(token_id)
        if jump and r is not None:
            p.playback.pause()
            p.step_model.set_step(r + 1)

    def corpus_caption(self, k: int, where: str, n_tokens: int) -> str:
        merge = ""
        if k > 0:
            st = self.panel.step_model.timeline.steps[k - 1]
            fresh = self.panel.corpus_view.fresh_count
            # merge k leads to step k; the token is isolated (U+2068..U+2069) so a right-to-left
            # token cannot reorder the caption around it
            made = f"; merge {k:,} made “\u2068{visible_token(st.token)}\u2069”"
            merge = (f"{made}: {fresh:,}× in the text shown (highlighted)" if fresh
                     else f"{made}: not in the text shown")
        return f"Step {k:,}: {where} → {n_tokens:,} tokens{merge}"

    def update_chart(self) -> None:
        p = self.panel
        tl = p.step_model.timeline
        loaded = tl is not None and not tl.has_counts  # a loaded tokenizer: no counts or lengths to plot
        if p.tabs.isTabEnabled(0) == loaded:  # (each call repaints the tabs)
            p.tabs.setTabEnabled(0, not loaded)
            p.tabs.setTabToolTip(0, "Counts and corpus lengths are unknown for a loaded tokenizer" if loaded else "")
        if loaded and p.tabs.currentIndex() == 0:
            p.tabs.setCurrentWidget(p.provenance)
        if tl is None or loaded:
            p.chart.set_series([0], [0], [0])
        else:
            length, vocab, count = series(tl)
            # a timeline may put a telling series in the middle plot (SuperBPE: bytes per token)
            second = tl.chart_second_series()
            title, middle = second if second is not None else (None, vocab)
            p.chart.set_series(length, middle, count, title, live=not p.step_model.is_finished)
        p.chart.set_marks(tl.chart_marks() if tl is not None and not loaded else [])
        p.chart.set_cursor(p.step_model.step)
