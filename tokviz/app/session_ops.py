"""`SessionController`: File > Save Session / Open Session, autosave and crash recovery.

A session (``tokviz.core.saved.session``) is gathered from the window (corpus, training settings, the
timeline, loaded tokenizers, the step, and the view: dock layout, raised panels, each panel's
``view_state()``, vocabulary selection, theme, font scale, geometry: `tokviz.app.session_view`) and
applied back in the same order a user would: corpus, settings, model, view, step. A file that does
not parse leaves the window untouched; a big corpus file that is missing or changed is reported and
the rest restored.

Autosave: every ``AppSettings.autosave_seconds()`` (default 60) when something changed, and at
once when a training run starts or finishes, to ``<data dir>/autosave.tokviz``, written on a
background thread. While a run is training, the session holds the corpus, the settings being
trained and the last complete model (the one on screen before the run), never a half-trained one,
so a session killed mid-run (kill -9, power cut) comes back with all three. A ``clean-exit``
marker is written when the window closes normally; at start-up an autosave without the marker
means the last run crashed, and the user is offered the autosaved session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from tokviz.core import TokvizError
from tokviz.core.registry import snapshot
from tokviz.core.io.safe_files import remove_stale_temp_files
from tokviz.core.saved.session import (
    EMBED_LIMIT,
    CorpusRef,
    Session,
    check_corpus_file,
    clean_view,
    corpus_by_path,
    load_session,
    save_session,
)
from tokviz.engine.step_model import StepModel
from tokviz.engine.tasks import TaskEngine
from tokviz.panels.corpus.panel import CorpusPanel
from tokviz.panels.token_view.panel import TokenViewPanel
from tokviz.panels.training.panel import TrainingPanel
from tokviz.panels.vocab_panel import VocabPanel

from .autosave_files import AUTOSAVE_NAME, CLEAN_EXIT_NAME, path_exists, write_autosave, write_marker
from .classroom.presenter import Presenter
from .docks import DockManager, LayoutFrame
from .file_ops import FileController
from .services import WindowServices
from .session_view import apply_view, gather_view
from .theme import Appearance
from .tokenizer_ops import TokenizerController
from .training_ops import TrainingController
from .waiting import wait_for_signals

SESSION_FILTER = "tokviz sessions (*.tokviz);;All files (*)"
HASH_TIMEOUT_MS = 600_000  # hashing a corpus of gigabytes on a slow disk

def _with_suffix(path: Path) -> Path:
    """A session file name: ``.tokviz`` added when the name has no extension."""
    return path.with_suffix(".tokviz") if path.suffix == "" else path


def _hash_corpus(path, *, should_stop, progress) -> CorpusRef:
    return corpus_by_path(path)


def _check_corpus(ref: CorpusRef, *, should_stop, progress) -> bool:
    check_corpus_file(ref)
    return True


@dataclass(frozen=True)
class SessionViews:
    """The panels whose state a session keeps besides each panel's ``view_state()``: the corpus,
    the training settings, the vocabulary selection and the token view's compared tokenizers."""

    corpus: CorpusPanel
    training: TrainingPanel
    vocab: VocabPanel
    token_view: TokenViewPanel


@dataclass(frozen=True)
class SessionParts:
    """What a session is gathered from and restored through besides the panels: the model and
    step, the corpus files, training runs, tokenizers, presenter mode (its normal layout is the one
    kept), the docks and the look."""

    step_model: StepModel
    files: FileController
    training: TrainingController
    tokenizers: TokenizerController
    presenter: Presenter
    docks: DockManager
    appearance: Appearance


class SessionController(QObject):
    """Sessions of one window. `saved(path)`, `opened(path)`, `autosaved(path)`."""

    saved = Signal(str)
    opened = Signal(str)
    autosaved = Signal(str)

    def __init__(self, frame: LayoutFrame, parts: SessionParts, views: SessionViews, services: WindowServices,
                 parent: QObject | None = None) -> None:
        """`frame`: the main window, whose geometry and dock layout a session keeps."""
        super().__init__(parent)
        self.frame, self.parts, self.views, self.services = frame, parts, views, services
        self.path: Path | None = None  # the session file of File > Save Session
        self.dirty = False
        self._restoring = False
        self.writer = TaskEngine("session-autosave", self)
        self.hasher = TaskEngine("session-hash", self)  # corpus files hashed off the GUI thread
        self.writer.finished.connect(self._on_writer_finished)
        self.writer.failed.connect(self._on_writer_failed)
        self.autosave_error = ""  # why the autosaves are failing ("" while they work)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.autosave)
        seconds = services.settings.autosave_seconds()
        if seconds > 0:
            self.timer.start(seconds * 1000)
        folder = services.settings.data_dir()
        remove_stale_temp_files(folder)  # what a killed autosave left behind
        self.autosave_path = folder / AUTOSAVE_NAME
        self.marker_path = folder / CLEAN_EXIT_NAME
        self.crashed = path_exists(self.autosave_path) and not path_exists(self.marker_path)
        try:
            self.marker_path.unlink()  # running now: a crash from here on leaves no marker
        except OSError:
            pass
        self._compare_queue: list[str] = []
        self._digests: dict[tuple, CorpusRef] = {}  # (path, mtime, size) -> hashed corpus file
        self._settled: tuple = (None, "", 0)  # (timeline, source, step) of the last complete model
        self._pending = False  # an autosave was asked for while the previous one was being written
        self._soon = False  # an autosave is due from the event loop (`_autosave_soon`)

    def watch(self) -> None:
        """Mark the session changed on edits, steps, models and view changes."""
        v, sm, look = self.views, self.parts.step_model, self.parts.appearance
        for sig in (v.corpus.document_changed, v.corpus.editor.textChanged, v.training.settings_changed,
                    sm.timeline_changed, sm.step_changed, look.theme_changed, look.font_scale_changed,
                    v.token_view.editor.textChanged):
            sig.connect(self._on_changed)
        for sig in (sm.timeline_changed, sm.step_changed, sm.finished_changed):
            sig.connect(self._remember_settled)
        self._remember_settled()
        self.parts.training.engine.started.connect(self._on_training_started)
        self.parts.training.done.connect(self._on_training_done)

    def _training_in_progress(self) -> bool:
        sm = self.parts.step_model
        return sm.source == "training" and not sm.is_finished and self.parts.training.engine.is_running

    @Slot()
    def _remember_settled(self, *_args) -> None:
        """Keep the model on screen, unless it is a run still training (its steps keep coming)."""
        if not self._training_in_progress():
            sm = self.parts.step_model
            self._settled = (sm.timeline, sm.source, sm.step)

    @Slot()
    def _on_training_started(self) -> None:
        """A run can take minutes: save its corpus and settings (and the model before it) now."""
        self._autosave_soon()

    @Slot(str)
    def _on_training_done(self, outcome: str) -> None:
        if outcome == "finished":
            self._autosave_soon()

    def _autosave_soon(self) -> None:
        """Autosave from the event loop, not from inside the signal (gathering a big corpus file
        runs the event loop while it is hashed)."""
        if not self._restoring and not self._soon:
            self._soon = True
            QTimer.singleShot(0, self._on_soon)

    @Slot()
    def _on_soon(self) -> None:
        self._soon = False
        self.autosave(force=True)

    @Slot()
    def _on_changed(self, *_args) -> None:
        if not self._restoring:
            self.dirty = True

    def _in_background(self, fn, *args):
        """`fn(*args)` on a worker thread while the window keeps drawing (hashing a corpus of
        gigabytes takes seconds); its result, or `TokvizError` with its message."""
        result: list = []
        self.hasher.finished.connect(result.append)
        errors: list = []
        self.hasher.failed.connect(errors.append)
        try:
            self.hasher.start(fn, *args)
            if wait_for_signals({"done": [self.hasher.finished], "failed": [self.hasher.failed]},
                                HASH_TIMEOUT_MS) == "timeout":
                self.hasher.cancel()
                raise TokvizError("reading the corpus file took too long")
        finally:
            self.hasher.finished.disconnect(result.append)
            self.hasher.failed.disconnect(errors.append)
        if errors:
            raise TokvizError(errors[0])
        return result[0]

    # -- gathering --------------------------------------------------------------------------

    def gather(self) -> Session:
        """The window's state as a `Session` (the timeline is a snapshot: safe to serialise
        on another thread while training continues)."""
        v, sm = self.views, self.parts.step_model
        c = v.corpus
        stat = c.path.stat() if c.path is not None and not c.is_modified and c.path.exists() else None
        if stat is not None and stat.st_size > EMBED_LIMIT:  # by path + sha256 (hashed once per file version)
            key = (str(c.path), stat.st_mtime_ns, stat.st_size)
            if self._digests.get(key) is None:
                self._digests = {key: self._in_background(_hash_corpus, c.path)}
            ref = self._digests[key]
            corpus = CorpusRef(c.title, c.word_counts, path=ref.path, sha256=ref.sha256, size=ref.size)
        else:
            corpus = CorpusRef(c.title, c.word_counts, text=c.text())
        try:
            settings = v.training.settings(word_counts=c.word_counts)
        except TokvizError:
            settings = None
        tl, source, step = self._settled if self._training_in_progress() else (sm.timeline, sm.source, sm.step)
        tokenizers, model, view_extra = [], None, {}
        if tl is not None and not tl.has_counts:  # a loaded tokenizer: saved by its path
            tokenizers.append(str(getattr(tl.settings, "source", "")))
            view_extra["pretrained_pattern"] = getattr(tl.settings, "pattern", None)
        elif tl is not None:
            model = snapshot(tl)
        view = {**gather_view(self.frame, self.parts.docks, self.parts.appearance, v.vocab,
                              self.parts.presenter.normal_layout()), **view_extra}
        return Session(corpus, settings, model, source if model is not None else "", tokenizers,
                       v.token_view.compare_paths(), step if tl is not None else None, view)

    def state_dict(self) -> dict:
        """The JSON of `gather()` (what tests compare between two windows)."""
        return self.gather().to_json()

    # -- saving -----------------------------------------------------------------------------

    def save(self, path: str | Path | None = None) -> bool:
        """Save to `path`, the current session file, or a file the user picks."""
        target = Path(path) if path is not None else self.path
        if target is None:
            return self.save_as()
        target = _with_suffix(target)
        try:
            save_session(self.gather(), target)
        except (TokvizError, OSError) as exc:
            self.services.dialogs.error("Could not save the session", str(exc))
            return False
        self.path = target
        self.dirty = False
        self.services.settings.add_recent_file(target)
        self.services.status(f"Saved session {target}", 5000)
        self.saved.emit(str(target))
        return True

    def save_as(self) -> bool:
        store = self.services.settings
        suggested = str(self.path or Path(store.last_dir()) / "session.tokviz")
        path = self.services.dialogs.save_path("Save Session As", suggested, SESSION_FILTER)
        if not path:
            return False
        target = _with_suffix(Path(path))  # the dialog asked about `path`, not the name with .tokviz added
        if target != Path(path) and target.exists() and not self.services.dialogs.ask_overwrite([target]):
            return False
        store.set_last_dir(target.parent)
        return self.save(target)

    # -- opening ----------------------------------------------------------------------------

    def open_dialog(self) -> None:
        store = self.services.settings
        path = self.services.dialogs.open_path("Open Session", store.last_dir(), SESSION_FILTER)
        if path:
            self.open(path)

    def open(self, path: str | Path) -> bool:
        """Read a session file and restore it; False (with a message, nothing changed) if it
        cannot be read or the user keeps unsaved changes."""
        try:
            session = load_session(path)
        except TokvizError as exc:
            self.services.dialogs.error("Could not open the session", str(exc))
            return False
        if not self.parts.files.maybe_save():
            return False
        self.apply(session)
        self.path = Path(path)
        self.services.settings.add_recent_file(path)
        self.services.status(f"Opened session {Path(path).name}", 5000)
        self.opened.emit(str(path))
        return True

    def apply(self, s: Session) -> None:
        """Restore `s` on screen: corpus, settings, model, view, step."""
        p, v, sm = self.parts, self.views, self.parts.step_model
        problems: list[str] = []
        self._restoring = True
        try:
            p.presenter.leave()
            if p.training.engine.is_running:
                p.training.engine.cancel()
            if s.corpus is not None:
                self._apply_corpus(s.corpus, problems)
            if s.train_settings is not None:
                try:
                    v.training.set_settings(s.train_settings)
                except (TokvizError, TypeError, AttributeError, ValueError) as exc:
                    problems.append(f"its training settings could not be shown ({exc})")
            if s.timeline is not None:
                sm.set_timeline(s.timeline, source=s.model_source or "session")
                v.training.show_summary(s.timeline, status="Model from the session")
            elif s.tokenizers:  # a pretrained tokenizer
                p.tokenizers.open(s.tokenizers[0], pattern=s.view.get("pretrained_pattern"))
                if p.tokenizers.wait() != "opened":
                    problems.append(f"the tokenizer {s.tokenizers[0]} could not be loaded")
            else:
                sm.set_timeline(None)
            view, dropped = clean_view(s.view)
            problems.extend(dropped)
            apply_view(self.frame, self.parts.docks, self.parts.appearance, v.vocab, view, problems)
            self._load_compare(list(s.compare_tokenizers))
            if s.step is not None and sm.timeline is not None:
                sm.set_step(s.step)
        finally:
            self._restoring = False
        self.dirty = False
        if problems:
            self.services.dialogs.error("Session partly restored", "; ".join(p[:1].upper() + p[1:] for p in problems))

    def _apply_corpus(self, ref: CorpusRef, problems: list[str]) -> None:
        files, corpus = self.parts.files, self.views.corpus
        if ref.text is not None:
            corpus.set_text(ref.text, title=ref.title or None, word_counts=ref.word_counts)
            if corpus.is_loading:
                wait_for_signals({"loaded": [corpus.text_loaded]}, 60_000)
            return
        try:
            self._in_background(_check_corpus, ref)
        except TokvizError as exc:
            problems.append(str(exc))
            return
        files.open_path(ref.path)
        files.wait()
        corpus.set_word_counts(ref.word_counts)

    def _load_compare(self, paths: list[str]) -> None:
        """Add the token view's comparison rows one after another (its loader keeps only the newest)."""
        panel = self.views.token_view
        if not paths:
            return
        if not self._compare_queue:
            panel.loader.loaded.connect(self._on_compare_done)
            panel.loader.failed.connect(self._on_compare_done)
        self._compare_queue = paths
        if not panel.add_tokenizer_file(self._compare_queue[0]):
            self._compare_queue = []

    @Slot()
    def _on_compare_done(self, *_args) -> None:
        panel = self.views.token_view
        if self._compare_queue:
            self._compare_queue.pop(0)
        if self._compare_queue:
            panel.add_tokenizer_file(self._compare_queue[0])
        else:
            panel.loader.loaded.disconnect(self._on_compare_done)
            panel.loader.failed.disconnect(self._on_compare_done)

    # -- autosave and crash recovery --------------------------------------------------------

    @Slot()
    def autosave(self, *, force: bool = False) -> bool:
        """Write the autosave (in the background) if something changed; True if started."""
        if not (self.dirty or force):
            return False
        if self.writer.is_running:  # write again once this one is done
            self._pending = True
            return False
        try:
            session = self.gather()
        except (TokvizError, OSError):
            return False
        self.dirty = False
        self.writer.start(write_autosave, session, self.autosave_path)
        return True

    @property
    def is_autosaving(self) -> bool:
        """An autosave is being written, or is due as soon as the one being written is done."""
        return self.writer.is_running or self._pending or self._soon

    def wait_autosaved(self, timeout_ms: int = 10_000) -> str:
        if not self.writer.is_running:
            return "idle"
        return wait_for_signals({"done": [self.writer.finished, self.writer.failed]}, timeout_ms)

    @Slot(object)
    def _on_writer_finished(self, path: str) -> None:
        if self.autosave_error:
            self.autosave_error = ""
            self.services.status("Automatic saving works again", 5000)
        self.autosaved.emit(path)
        if self._pending:
            self._pending = False
            self.autosave(force=True)

    @Slot(str)
    def _on_writer_failed(self, message: str) -> None:
        """Say once per run of failures (not on every tick) that autosaving does not work; the
        session stays changed so the next tick tries again, and nothing in the window is lost."""
        self.dirty = True
        self._pending = False
        if not self.autosave_error:
            self.services.status(f"Automatic saving failed: {message}. Your work is still here; "
                                 f"save it with File > Save Session.")
        self.autosave_error = message

    def offer_recovery(self) -> bool:
        """After a crash: ask to restore the autosaved session; True if it was restored."""
        if not self.crashed:
            return False
        self.crashed = False
        if not self.services.dialogs.ask_yes_no(
                "Restore the last session?",
                "tokviz did not close normally last time. Restore the automatically saved session?"):
            return False
        try:
            session = load_session(self.autosave_path)
        except TokvizError as exc:
            self.services.dialogs.error("Could not restore the session", str(exc))
            return False
        self.apply(session)
        self.services.status("Restored the automatically saved session", 5000)
        return True

    def mark_clean_exit(self) -> None:
        """The window is closing normally: no recovery offer next time."""
        self.timer.stop()
        self.writer.shutdown()
        write_marker(self.marker_path)

    def shutdown(self) -> None:
        self.timer.stop()
        self.writer.shutdown()
        self.hasher.shutdown()
