"""`ChatEngine`: loads a model folder and renders the Chat view's conversation on worker threads.

A render request holds the model, a copy of the messages and the switches; the job renders the
template (`tokviz.core.chat.render_chat`), lints the prompt and prepares what the token view draws
(`tokviz.core.display.tokens.token_display`), so the GUI thread only paints. A template error is a
result, not a failure: the view shows it (with its line and the linter's finding) and keeps the
messages. Requests run on a `DebouncedTaskEngine`: at once after a quiet moment, debounced by a
frame while typing, the newest winning. Templates render in the engine's own warm child process
(`tokviz.core.chat.TemplateRunner`, started when a folder is loaded): a render still running when a
newer request arrives is given a moment, then killed, and so is one still running at `shutdown`;
a template that passes a hard limit (time, CPU, memory) is a result like any template error.

What this leaves out: widgets (``tokviz.panels.chat``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from tokviz.core.chat import (
    ChatModel,
    ChatRender,
    Finding,
    TemplateError,
    TemplateRunner,
    lint_chat,
    load_chat_model,
    render_chat,
)
from tokviz.core.display.tokens import TokenDisplay, token_display
from tokviz.engine.tasks import DebouncedTaskEngine, TaskEngine

DEBOUNCE_MS = 16  # one frame: a burst of keys is rendered once


@dataclass(frozen=True)
class ChatRequest:
    model: ChatModel
    messages: tuple[dict, ...]
    add_generation_prompt: bool = False
    specials_as_text: bool = False
    show_whitespace: bool = False
    n_colors: int = 8


@dataclass
class ChatResult:
    request: ChatRequest
    render: ChatRender | None  # None when the template failed
    error: TemplateError | None = None
    findings: list[Finding] = field(default_factory=list)
    display: TokenDisplay | None = None
    seconds: float = 0.0


def chat_job(request: ChatRequest, *, runner: TemplateRunner | None = None, should_stop=lambda: False,
             progress=lambda *a: None) -> ChatResult:
    """Render (in `runner`'s child), lint and label one request (runs on a worker thread)."""
    t0 = time.perf_counter()
    model, messages = request.model, list(request.messages)
    try:
        render = render_chat(model, messages, add_generation_prompt=request.add_generation_prompt,
                             specials_as_text=request.specials_as_text, should_stop=should_stop, runner=runner)
    except TemplateError as exc:
        return ChatResult(request, None, exc, lint_chat(model, messages, error=exc),
                          seconds=time.perf_counter() - t0)
    findings = lint_chat(model, messages, render)
    display = token_display(render.text, render.encoding, n_colors=request.n_colors,
                            show_whitespace=request.show_whitespace)
    return ChatResult(request, render, None, findings, display, time.perf_counter() - t0)


def load_job(folder: str, *, should_stop=lambda: False, progress=lambda *a: None) -> ChatModel:
    progress(f"Loading {Path(folder).name}…", 0.0)
    return load_chat_model(folder)


class ChatEngine(QObject):
    """`model_loaded(ChatModel)` or `load_failed(message)` per load; `rendered(ChatResult)` or
    `render_failed(message)` per render request (the newest one: a burst of keys renders once)."""

    model_loaded = Signal(object)
    load_failed = Signal(str)
    rendered = Signal(object)
    render_failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loader = TaskEngine("chat_loader", self)
        self.renderer = DebouncedTaskEngine("chat_renderer", self, debounce_ms=DEBOUNCE_MS, stoppable=True)
        self.loader.finished.connect(self.model_loaded)
        self.loader.failed.connect(self.load_failed)
        self.templates = TemplateRunner()
        self.renderer.computed.connect(self.rendered)
        self.renderer.failed.connect(self.render_failed)
        self._closed = False

    @property
    def is_pending(self) -> bool:
        """True while a load or a render waits or runs."""
        return self.loader.is_running or self.renderer.is_busy

    def load(self, folder: str | Path) -> None:
        if not self._closed:
            self.loader.start(load_job, str(folder))
            self.templates.start()  # its start-up overlaps the loading

    def request(self, request: ChatRequest) -> None:
        """Render `request`: at once after a quiet moment, else when typing pauses for a frame."""
        if not self._closed:
            self.renderer.request(chat_job, request, runner=self.templates)
            self.templates.wake()  # a render this request cancelled stops waiting for its child

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop loading and rendering: a template still running is killed, so this never waits on it."""
        self._closed = True
        self.templates.close()
        self.renderer.shutdown()
        return self.loader.shutdown(timeout_ms)
