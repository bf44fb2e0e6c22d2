"""`MergeParts`: the merge timeline's views for timelines made of merges (BPE, WordPiece, loaded
tokenizers): the winning pair and its competitors at step k, the merge tree and word trace, the
counts over all steps, the merge table's selection.

The panel asks whichever parts fit the current timeline (`lists_merges`: these; else
`UnigramParts`, which shows rounds); both answer the same calls (`tokenizer`, `sync`, `refresh`,
`trace`, `show_piece`, `corpus_caption`, `update_chart`), so the panel has no per-algorithm branches.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from tokviz.core.bpe.replay import series
from tokviz.core.display.tokens import visible_token


class MergeParts(QObject):
    """The panel's own widgets (candidates, provenance, chart, merge table) driven for step k."""

    def __init__(self, panel) -> None:
        super().__init__(panel)
        self.panel = panel
        self._tokenizer = None

    def reset(self) -> None:
        self._tokenizer = None

    def tokenizer(self, k: int):
        """The timeline's tokenizer, rebuilt when merges beyond it arrive (None with no timeline)."""
        tl = self.panel.step_model.timeline
        if tl is None:
            self._tokenizer = None
        elif self._tokenizer is None or self._tokenizer.n_merges < k:
            self._tokenizer = tl.tokenizer()
        return self._tokenizer

    def sync(self, k: int) -> None:
        """Give the provenance view the current timeline, vocabulary and step (before a refresh)."""
        p = self.panel
        p.provenance.set_state(p.step_model.timeline, self.tokenizer(k), p.vocab, k)

    def refresh(self, k: int) -> None:
        p = self.panel
        tl, tok = p.step_model.timeline, self.tokenizer(k)
        p.update_selection(k)
        p.candidates_view.show_step(tl, k, p.vocab)
        p.show_corpus_at(tok, k)
        p.chart.set_cursor(k)
        p.provenance.set_state(tl, tok, p.vocab, k)

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
            made = f"; merge {k:,} made “{visible_token(st.token)}”"  # merge k leads to step k
            merge = (f"{made}: {fresh:,}× in the text shown (highlighted)" if fresh
                     else f"{made}: not in the text shown")
        return f"Step {k:,}: {where} → {n_tokens:,} tokens{merge}"

    def update_chart(self) -> None:
        p = self.panel
        tl = p.step_model.timeline
        loaded = tl is not None and not tl.has_counts  # a loaded tokenizer: no counts or lengths to plot
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
            p.chart.set_series(length, middle, count, title)
        p.chart.set_marks(tl.chart_marks() if tl is not None and not loaded else [])
        p.chart.set_cursor(p.step_model.step)
