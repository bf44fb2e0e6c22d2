"""`TrainingController`: starts training runs for the window and reports how each one ended.

The window's Train/Cancel commands and scripting calls come here; the run itself happens in
`TrainingEngine`. The controller validates the settings, reads the corpus, shows progress and the
outcome (status bar, training panel summary, error dialog), remembers finished runs for the token
view, and emits `done(outcome)` once per run. It gets the objects it works with, not the window.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from tokviz.core import TokvizError
from tokviz.core.registry import step_noun
from tokviz.engine.training.engine import STAGE_COMPILING, TrainingEngine, TrainingProgress
from tokviz.engine.training.warm_up import warm_up_in_background
from tokviz.engine.workspace import Workspace
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.training.panel import TrainingPanel
from tokviz.panels.training.status import TrainingStatusPanel, format_duration, format_progress

from .services import WindowServices

WARM_UP_DELAY_MS = 2000  # after the window opens: a restored Unigram choice starts loading its kernels


class TrainingController(QObject):
    """Glue between the training panel, the corpus, the engine and the status displays."""

    done = Signal(str)  # "finished", "cancelled" or "failed", once per run

    def __init__(self, engine: TrainingEngine, workspace: Workspace, corpus_panel: CorpusPanel,
                 training_panel: TrainingPanel, training_status: TrainingStatusPanel, services: WindowServices,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine, self.workspace, self.services = engine, workspace, services
        self.corpus_panel, self.training_panel, self.training_status = corpus_panel, training_panel, training_status
        self.last_outcome = ""  # of the last run: finished, cancelled or failed
        self._compiling = False  # the training panel says numba is compiling (the status bar too)
        e = engine
        e.started.connect(self._on_engine_started)
        e.progress_changed.connect(training_status.show_progress)
        e.progress_changed.connect(self._on_engine_progress_changed)
        workspace.step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
        e.finished.connect(self._on_engine_finished)
        e.cancelled.connect(self._on_engine_cancelled)
        e.failed.connect(self._on_engine_failed)
        e.running_changed.connect(self._on_engine_running_changed)
        # an algorithm with compiled code (Unigram) starts loading it once chosen; a choice restored
        # from the settings, once the window has had time to come up
        training_panel.algorithm_box.currentIndexChanged.connect(self._warm_up_chosen_algorithm)
        QTimer.singleShot(WARM_UP_DELAY_MS, self, self._warm_up_chosen_algorithm)

    @Slot()
    def _warm_up_chosen_algorithm(self) -> None:
        warm_up_in_background(self.training_panel.algo.algorithm)

    def start(self, settings=None) -> bool:
        """Train on the corpus; False (with a message) if the settings or corpus are unusable."""
        corpus = self.corpus_panel
        try:
            if settings is None:
                settings = self.training_panel.settings(word_counts=corpus.word_counts)
            else:
                settings = settings.validate()
                self.training_panel.set_settings(settings)
                if hasattr(settings, "word_counts"):  # BPE settings carry the mode
                    corpus.set_word_counts(settings.word_counts)
            if corpus.is_blank():
                raise TokvizError("the corpus is empty: type some text, open a file or pick a sample")
            word_counts = getattr(settings, "word_counts", corpus.word_counts)  # WordPiece/Unigram: the corpus's mode
            self.engine.start(settings, corpus.corpus_input(word_counts=word_counts))
        except TokvizError as exc:
            message = str(exc)
            self.last_outcome = "failed"
            self.training_status.show_outcome(f"Cannot train: {message}")
            self.services.dialogs.error("Cannot train", message[:1].upper() + message[1:])
            return False
        self.services.settings.save_train_settings(
            replace(settings, word_counts=False) if hasattr(settings, "word_counts") else settings)
        return True

    def show_model(self, timeline, path) -> None:
        """Show a model opened from a file (any algorithm, or a real tokenizer): cancel a run,
        make it the current timeline, show its settings and summary, offer it for comparison."""
        if self.engine.is_running:
            self.engine.cancel()
        self.workspace.step_model.set_timeline(timeline, source=str(path))
        self.training_panel.set_settings(timeline.settings)
        self.training_panel.show_summary(timeline, status=f"Model {path.name}")
        self.workspace.trained_models.add(timeline, name=f"{path.name}")  # a comparison row candidate

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        """The status bar describes the current model: a loaded tokenizer replaces the last
        training's outcome (training reports its own when it ends)."""
        tl = self.workspace.step_model.timeline
        if tl is not None and not tl.has_counts and not self.engine.is_running:
            self.training_status.show_outcome(f"Opened {tl.settings.name} ({tl.vocab_size:,} tokens)")

    @Slot()
    def _on_engine_started(self) -> None:
        self.last_outcome = ""
        self.training_panel.show_summary(None, status="Training…")

    @Slot(object)
    def _on_engine_progress_changed(self, p: TrainingProgress) -> None:
        """The training panel names a long first wait too: numba compiling kernels, seconds ticking."""
        compiling = p.stage == STAGE_COMPILING
        if compiling or self._compiling:
            self.training_panel.show_summary(None, status=format_progress(p) if compiling else "Training…")
        self._compiling = compiling

    @Slot()
    def _on_engine_running_changed(self) -> None:
        self.training_panel.set_running(self.engine.is_running)

    @Slot(object)
    def _on_engine_finished(self, timeline) -> None:
        p = self.engine.last_progress
        elapsed = format_duration(p.elapsed) if p else format_duration(0)
        n = timeline.n_steps
        budget = p.budget if p else None
        if timeline.renumbers_vocab:  # rounds after the seed (round 0), as the timeline counts them
            status = (f"Trained {timeline.last_step:,} {timeline.title} {step_noun(timeline)} in {elapsed}: "
                      f"{timeline.vocab_size:,} tokens")
        elif budget is not None and n >= budget:
            title = "" if timeline.replays_merges else f"{timeline.title} "
            status = f"Trained {n:,} {title}{step_noun(timeline)} in {elapsed}"
        else:
            status = (f"Trained {n:,} merges in {elapsed}; stopped early: no pair occurs "
                      f"{timeline.settings.min_count}+ times")
        self.training_status.show_outcome(status)
        self.training_panel.show_summary(timeline, status=status)
        self.workspace.trained_models.add(timeline)
        self._end_run("finished")

    @Slot()
    def _on_engine_cancelled(self) -> None:
        sm = self.workspace.step_model
        n = sm.n_steps if sm.source == "training" else 0
        status = f"Training cancelled after {n:,} {step_noun(sm.timeline, n)}"
        self.training_status.show_outcome(status)
        self.training_panel.show_summary(sm.timeline if n else None, status=status)
        self._end_run("cancelled")

    @Slot(str)
    def _on_engine_failed(self, message: str) -> None:
        self.training_status.show_outcome(f"Training failed: {message}")
        self.training_panel.show_summary(None, status=f"Training failed: {message}")
        self.services.dialogs.error("Training failed", message[:1].upper() + message[1:])
        self._end_run("failed")

    def _end_run(self, outcome: str) -> None:
        self.last_outcome = outcome
        self.done.emit(outcome)
