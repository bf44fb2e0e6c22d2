"""`LessonRunner`: plays a guided lesson through the window's controllers, one step at a time, never blocking.

Going to step i replays the lesson's state up to i, so Back and Next always show the same screen:

1. the training in force at step i (the lesson's own, or the last ``train`` action of steps <= i)
   runs if it is not the one on screen: corpus, then `TrainingController.start`, then wait for
   the run to end;
2. the lesson's set-up (token view text, pretrained tokenizers, panels), then the actions of the
   steps from that training up to i, in order;
3. once the token view (and any heatmap or embedding work) has settled, the figure and the caption
   are computed and shown, and `step_shown(i)` is emitted.

Actions that take time (training, loading a corpus or a tokenizer, tokenizing for embeddings,
training embeddings, positional heatmaps) return the signals to wait for; the runner continues
when one fires. A newer request (Next pressed again, another lesson) makes older waits stale.

A lesson drives the window through the controllers a script works through (`LessonParts`: the
corpus, training runs, the step, the panel in front), plus the panels it sets up and reads figures
from (`LessonViews`); it never holds the window, nor the scripting surface (which drives lessons).

What this leaves out: the lesson files (``tokviz.core.lessons.files``), the maths of the figures
(``tokviz.core.lessons.figures``), drawing (``tokviz.panels.lesson_panel``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from tokviz.core import TokvizError
from tokviz.core.lessons.figure_kinds import compute_figure
from tokviz.core.lessons.figures import FigureContext, step_fields
from tokviz.core.lessons.files import (
    PRETRAINED,
    TABS,
    Action,
    Lesson,
    LessonError,
    builtin_lessons,
    find_lesson,
    format_caption,
    missing_note,
    pretrained_file,
)
from tokviz.core.lessons.view_text import lesson_view_text
from tokviz.engine.samples import sample
from tokviz.engine.step_model import StepModel
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.lesson_panel import LessonPanel
from tokviz.panels.token_view.panel import TokenViewPanel

from ..dialogs import Dialogs
from ..docks import DockManager
from ..file_ops import FileController
from ..training_ops import TrainingController

if TYPE_CHECKING:  # the heatmap panels are built on first use: not imported with the window
    from tokviz.panels.heatmaps.embedding_panel import EmbeddingPanel
    from tokviz.panels.heatmaps.positional_panel import PositionalPanel

_TOKENIZER_CACHE: dict[str, object] = {}  # path -> loaded tokenizer (lessons share them)
VIEW_DEFAULTS = {"mode": "text", "whitespace": True, "bos": False, "eos": False, "pad": "right"}


@dataclass(frozen=True)
class LessonParts:
    """What a lesson drives: the corpus (`files`), training runs (`training`), the step shown
    (`step_model`), the panel in front (`docks`) and the workspace (`workspace(key)`: the lesson's
    own while it runs, None gives the user's back; `WorkspaceController.lend`)."""

    files: FileController
    training: TrainingController
    step_model: StepModel
    docks: DockManager
    workspace: Callable[[str | None], None] = lambda key: None


@dataclass(frozen=True)
class LessonViews:
    """The panels a lesson sets up and reads its figures from, besides its own."""

    corpus: CorpusPanel
    token_view: TokenViewPanel
    embedding: Callable[[], EmbeddingPanel]  # the heatmap panels are built on first use
    positional: Callable[[], PositionalPanel]


class LessonRunner(QObject):
    """Drives the window through a `Lesson` with `parts`, showing the lesson in `panel`."""

    step_shown = Signal(int)  # the step is on screen (caption, panels, figure)
    failed = Signal(str)
    lesson_changed = Signal()  # a lesson started or stopped
    caption_changed = Signal(str)  # the step's caption ("" when the lesson stops)

    def __init__(self, parts: LessonParts, panel: LessonPanel, views: LessonViews, dialogs: Dialogs,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.parts, self.panel, self.views, self.dialogs = parts, panel, views, dialogs
        self.panel_ids: list[str] | None = None  # the panels presenter mode shows while it runs
        self._lessons: list[Lesson] | None = None
        self.lesson: Lesson | None = None
        self.index = -1
        self.caption = ""
        self.figure = None
        self.fields: dict = {}
        self.tokenizers: dict[str, object] = {}  # PRETRAINED name -> tokenizer
        self.missing: dict[str, str] = {}  # PRETRAINED name -> file it needs
        self._queue: list[Action] = []
        self._gen = 0  # bumps on every new request: stale waits are ignored
        self._waits: list = []  # (signal, slot) of the current wait
        self._anchor: tuple | None = None  # (lesson name, step index of the training on screen)
        self._corpus_text = ""
        self._embedded: tuple | None = None  # (timeline id, merges, step) the embedding panel tokenized
        self._covered: dict[str, str] = {}  # panel a lesson raised -> the panel it hid in its tab group
        panel.next_requested.connect(self.next)
        panel.prev_requested.connect(self.prev)
        panel.stop_requested.connect(self.stop)

    # -- public ------------------------------------------------------------------------------

    def lessons(self) -> list[Lesson]:
        if self._lessons is None:
            self._lessons = builtin_lessons()
        return self._lessons

    @property
    def is_busy(self) -> bool:
        return bool(self._queue) or bool(self._waits)

    def start(self, key: str) -> bool:
        """Start lesson `key` (name or number) at its first step; False with a message if unknown."""
        try:
            lesson = find_lesson(str(key), self.lessons())
        except LessonError as exc:
            self.dialogs.error("Cannot start the lesson", str(exc))
            return False
        self._cancel_wait()
        self._give_back(lesson.panels)
        self.parts.workspace(lesson.workspace)  # before its panels are raised in it
        self.lesson, self.index, self._anchor = lesson, -1, None
        self.tokenizers, self.missing = {}, {}
        tv = self.views.token_view
        clear = getattr(tv, "clear_tokenizers", None)
        if callable(clear):
            clear()
        main = [p for p in lesson.panels if p != "lesson"][:1]
        # presenter mode: the lesson's main panel, and the lesson panel when it has a figure to show
        self.panel_ids = main + (["lesson"] if lesson.figure is not None or not main else [])
        self.panel.show_lesson(lesson.label, lesson.n_steps)
        self.parts.docks.select("lesson")
        self.lesson_changed.emit()
        self.go(0)
        return True

    def stop(self) -> None:
        self._cancel_wait()
        if self.lesson is not None:
            self.parts.workspace(None)
        self.lesson, self.index, self._anchor = None, -1, None
        self.panel_ids = None
        self.caption = ""
        self.caption_changed.emit("")
        self.panel.show_lesson(None)
        self.lesson_changed.emit()

    @Slot()
    def next(self) -> None:
        if self.lesson is not None and self.index + 1 < self.lesson.n_steps:
            self.go(self.index + 1)

    @Slot()
    def prev(self) -> None:
        if self.lesson is not None and self.index > 0:
            self.go(self.index - 1)

    def go(self, index: int) -> None:
        """Show step `index` (see the module docstring for how)."""
        lesson = self.lesson
        if lesson is None or not 0 <= index < lesson.n_steps:
            return
        self._cancel_wait()
        self.index = index
        anchor, train_action = -1, None
        for i in range(index + 1):
            for a in lesson.steps[i].actions:
                if a.do == "train":
                    anchor, train_action = i, a
        queue: list[Action] = []
        if self._anchor != (lesson.name, anchor):
            if train_action is not None:
                queue += [Action("corpus", {"corpus": train_action.get("corpus") or lesson.corpus}), train_action]
            elif lesson.train is not None:
                queue += [Action("corpus", {"corpus": lesson.corpus}), Action("train", {"settings": lesson.train})]
            else:  # no training: a lesson corpus, or none (comparison rows only)
                queue.append(Action("corpus", {"corpus": lesson.corpus}))
                queue.append(Action("untrain"))
            queue.append(Action("anchor", {"anchor": (lesson.name, anchor)}))
        queue += [Action("view", dict(VIEW_DEFAULTS)), Action("tab", {"name": "compare"})]
        queue.append(Action("text", {"value": lesson.text}))  # None: a line of the corpus, never the old text
        queue += [Action("tokenizer", {"name": n}) for n in lesson.tokenizers]
        queue += [Action("panel", {"id": p}) for p in reversed(lesson.panels)]
        for i in range(max(anchor, 0), index + 1):
            queue += [a for a in lesson.steps[i].actions if a.do != "train" and (a.do != "embeddings" or i == index
                                                                                  or a.get("table") == "random")]
        queue.append(Action("settle"))
        self._queue = queue
        self.panel.set_busy(True, f"Part {index + 1} of {lesson.n_steps}: preparing…")
        self._schedule()

    # -- running actions ---------------------------------------------------------------------

    def _schedule(self) -> None:
        """Run the queue from the event loop (a request made since then wins)."""
        gen = self._gen
        QTimer.singleShot(0, lambda: self._run() if gen == self._gen else None)

    def _run(self) -> None:
        while self._queue and not self._waits:
            action = self._queue.pop(0)
            try:
                waits = getattr(self, f"_do_{action.do}")(action)
            except TokvizError as exc:
                self._fail(str(exc))
                return
            if waits:
                self._wait(waits)
                return
        if not self._queue and not self._waits and self.lesson is not None and self.index >= 0:
            self._show_step()

    def _wait(self, waits: list) -> None:
        """Continue when one of `waits` fires: (signal, ok) pairs; ok False = the step failed, a
        callable(*args) -> str|None decides (a message means failure)."""
        gen = self._gen
        for signal, ok in waits:
            def slot(*args, ok=ok) -> None:
                if gen != self._gen:
                    return
                message = ok(*args) if callable(ok) else (None if ok else (args[0] if args else "failed"))
                self._cancel_wait(bump=False)
                if message:
                    self._fail(str(message))
                else:
                    self._schedule()
            signal.connect(slot)
            self._waits.append((signal, slot))

    def _cancel_wait(self, *, bump: bool = True) -> None:
        if bump:
            self._gen += 1
            self._queue = []
        for signal, slot in self._waits:
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        self._waits = []

    def _fail(self, message: str) -> None:
        self._cancel_wait()
        self.panel.set_busy(False)
        self.panel.caption.setText(f"This step could not be shown: {message}")
        self.failed.emit(message)

    # -- actions -------------------------------------------------------------------------------

    def _do_corpus(self, a: Action):
        corpus, files = a.get("corpus"), self.parts.files
        if corpus is None:
            self._corpus_text = ""
            ok = files.set_corpus_text("", title=f"Lesson: {self.lesson.title}")
        elif corpus.kind == "sample":
            self._corpus_text = sample(corpus.value).read()
            ok = files.load_sample(corpus.value)
        else:
            self._corpus_text = corpus.read()
            ok = files.set_corpus_text(self._corpus_text, title=f"Lesson: {self.lesson.title}")
        if not ok:
            raise LessonError("the corpus was not replaced (unsaved changes were kept)")
        if self.views.corpus.is_loading:
            return [(self.views.corpus.text_loaded, True)]
        return None

    def _do_train(self, a: Action):
        training = self.parts.training
        if training.engine.is_running:  # reports "cancelled" now, before the wait below listens
            training.engine.cancel()
        if not training.start(a.get("settings")):
            raise LessonError("training could not start")
        return [(training.done, lambda outcome: None if outcome == "finished" else f"training {outcome}")]

    def _do_untrain(self, _a: Action):
        engine = self.parts.training.engine
        if engine.is_running:
            engine.cancel()
        self.parts.step_model.set_timeline(None)

    def _do_anchor(self, a: Action):
        self._anchor = a.get("anchor")

    def _do_step(self, a: Action):
        sm = self.parts.step_model
        to = a.get("to")
        sm.set_step(sm.n_steps if to == "last" else to)

    def _do_vocab(self, a: Action):
        tl = self.parts.step_model.timeline
        if tl is not None:
            self.parts.step_model.set_step(a.get("size") - (tl.vocab_size - tl.n_merges))

    def _do_panel(self, a: Action):
        pid, docks = a.get("id"), self.parts.docks
        hidden = docks.front_of(pid)
        if hidden not in (None, pid):
            self._covered.setdefault(pid, hidden)
        docks.select(pid)

    def _give_back(self, keep: list[str]) -> None:
        """Panels earlier lessons raised and `keep` does not list give their tab group back to the
        panel they hid (a positional view left in front is not this lesson's)."""
        docks = self.parts.docks
        for pid, hidden in self._covered.items():
            if pid not in keep and docks.front_of(pid) == pid:
                docks.dock(hidden).raise_()
        self._covered = {pid: hidden for pid, hidden in self._covered.items() if pid in keep}

    def _do_text(self, a: Action):
        tv = self.views.token_view
        text = lesson_view_text(a.get("value"), self._corpus_text)
        if tv.text() != text:
            tv.set_text(text)

    def _do_tab(self, a: Action):
        tv = self.views.token_view
        tv.tabs.setCurrentIndex(TABS.index(a.get("name")))
        if "word" in a.args:
            tv.samples.set_word(a.get("word"))
        if "dropout" in a.args:
            tv.samples.dropout_spin.setValue(a.get("dropout"))

    def _do_view(self, a: Action):
        tv = self.views.token_view
        if "mode" in a.args:
            tv.set_mode(a.get("mode"))
        if "whitespace" in a.args:
            tv.set_show_whitespace(a.get("whitespace"))
        for key, box in (("bos", tv.bos_box), ("eos", tv.eos_box)):
            if key in a.args:
                box.setChecked(a.get(key))
        if "pad" in a.args:
            tv.pad_box.setCurrentIndex(tv.pad_box.findData(a.get("pad")))

    def _do_tokenizer(self, a: Action):
        name = a.get("name")
        if name in self.tokenizers or name in self.missing:
            return None
        path = pretrained_file(name)
        if path is None:
            self.missing[name] = PRETRAINED[name][0]
            return None
        tv = self.views.token_view
        cached = _TOKENIZER_CACHE.get(str(path))
        if cached is not None:
            self.tokenizers[name] = cached
            tv.add_tokenizer(cached)
            return None
        if not tv.add_tokenizer_file(path):
            self.missing[name] = PRETRAINED[name][0]
            return None

        def loaded(tok) -> None:
            try:
                tok.name = PRETRAINED[name][1]
            except AttributeError:
                pass
            _TOKENIZER_CACHE[str(path)] = self.tokenizers[name] = tok
            tv.refresh()

        return [(tv.loader.loaded, lambda tok: loaded(tok)),
                (tv.loader.failed, lambda message: f"cannot load {path.name}: {message}")]

    def _do_positional(self, a: Action):
        p = self.views.positional()
        if "d" in a.args:
            p.dim_spin.setValue(a.get("d"))
        if "positions" in a.args:
            p.pos_spin.setValue(a.get("positions"))
        p.set_kind(a.get("kind"))
        if "view" in a.args:
            p.set_view(a.get("view"))
        return [(p.view_shown, True)] if p.engine.is_busy else None

    def _do_embeddings(self, a: Action):
        p = self.views.embedding()
        if "dim" in a.args and p.dim_spin.value() != a.get("dim"):
            p.dim_spin.setValue(a.get("dim"))
        sm = self.parts.step_model
        tl = sm.timeline
        key = (id(tl), tl.n_steps if tl is not None else 0, sm.step)
        if p.corpus is None or self._embedded != key:
            self._queue.insert(0, a)  # again, once the corpus is tokenized
            if not p.retokenize():
                raise LessonError("embeddings need a trained tokenizer")

            def tokenized(_corpus) -> None:
                self._embedded = key
            return [(p.corpus_tokenized, tokenized), (p.sources.failed, False)]
        if a.get("table") == "random":
            p.reset_random()
            return [(p.heatmap_shown, True)] if p.similarity_engine.is_busy else None
        settings = replace(p.train_settings(), epochs=a.get("epochs", p.epochs_spin.value()))
        if not p.start_training(settings):
            raise LessonError(p.status.text() or "embedding training could not start")
        e = p.training_engine
        return [(e.finished, True), (e.failed, False), (e.cancelled, lambda: "embedding training was cancelled")]

    def _do_settle(self, _a: Action):
        """Wait until the token view (and its Samples tab), the similarity heatmap and the positional
        view show their newest results."""
        tv, emb, pos = self.views.token_view, self.views.embedding(), self.views.positional()
        samples = tv.samples.engine
        for busy, waits in ((tv.engine.is_pending, [(tv.result_shown, True), (tv.engine.failed, True)]),
                            (samples.is_busy, [(tv.samples.shares_shown, True), (samples.failed, True)]),
                            (emb.similarity_engine.is_busy, [(emb.heatmap_shown, True)]),
                            (pos.engine.is_busy, [(pos.view_shown, True)])):
            if busy:
                self._queue.insert(0, Action("settle"))
                return waits
        return None

    # -- showing ---------------------------------------------------------------------------

    def context(self) -> FigureContext:
        v, sm = self.views, self.parts.step_model
        emb = v.embedding()
        embedding = None
        if emb.table is not None and emb.corpus is not None and emb.table.n_vocab == emb.corpus.n_vocab:
            embedding = (emb.table.vectors, emb.corpus.labels, emb.corpus.counts)
        result = v.token_view.result
        b = result.batch if result is not None else None
        batch = (b.batch, b.lines, b.bos_id, b.eos_id, b.pad_id) if b is not None else None
        return FigureContext(text=v.token_view.text(), corpus=self._corpus_text, timeline=sm.timeline,
                             step=sm.step, tokenizers=dict(self.tokenizers), embedding=embedding,
                             params=dict(self.lesson.figure or {}), missing=dict(self.missing), batch=batch)

    def _show_step(self) -> None:
        lesson, i = self.lesson, self.index
        ctx = self.context()
        try:
            figure, fields = compute_figure(lesson.figure, ctx)
        except TokvizError as exc:
            figure, fields = None, {}
            self.failed.emit(str(exc))
        values = step_fields(ctx.timeline, ctx.step, ctx.text if lesson.text is not None else "")
        values.update(fields)
        notes = [missing_note(n) for n in lesson.tokenizers if n in self.missing]
        values["missing"] = " ".join(notes)
        caption = format_caption(lesson.steps[i].caption, values)
        if notes and "{missing}" not in lesson.steps[i].caption:
            caption += "\n\n⚠ " + " ".join(notes)
        self.caption, self.figure, self.fields = caption, figure, values
        self.panel.show_step(i, lesson.n_steps, caption)
        self.panel.show_figure(figure)
        if figure is not None and lesson.figure.get("kind") == "neighbours" and ctx.timeline is not None:
            ids = ctx.timeline.tokenizer().encode_ordinary(lesson.figure.get("token", " the"), step=ctx.step).ids
            if len(ids) == 1 and self.views.embedding().corpus is not None:
                self.views.embedding().select_token(ids[0])  # its neighbours list matches the figure
        self.caption_changed.emit(caption)  # presenter mode shows it full screen
        self.step_shown.emit(i)
