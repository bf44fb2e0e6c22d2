"""`ChatPanel`: a conversation rendered with a model's chat template, exactly as the model sees it.

Left, the messages (`MessageList`: add, remove, reorder, role, content; each shows how many tokens
it takes, its characters and tokens in the tooltip, or that the template leaves it out). In the middle, the rendered prompt coloured token by token by the
token view's own widget (`TokenFlowView`: special tokens are badges, byte tokens bracketed under
their character), the tokens of the message being edited outlined; under it the linter's
findings (click one to see its tokens). Right, the template source (a failing line is marked).
Switches: generation prompt, special tokens inside messages as text, visible whitespace, the
assistant mask (the tokens inside the template's ``{% generation %}`` blocks outlined, as
transformers' ``return_assistant_tokens_mask`` marks them), and the template when the model has
several (a named set: ``default``, ``tool_use``, ...).

A model folder (``tokenizer.json`` + ``tokenizer_config.json``) is opened with "Open model
folder…", or follows the tokenizer opened in the window when its folder has a chat template.
Rendering runs in `ChatEngine` (off the GUI thread, in a child process, newest request wins); a
template error, a template stopped at a limit of that process (time, CPU, memory) or a folder
without a template is shown in the banner and the messages stay as they are.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.core.chat import ChatModel, read_messages
from tokviz.core.display.palette import token_palette
from tokviz.core.display.tokens import hex_bytes, visible_token
from tokviz.core.errors import TokvizError
from tokviz.core.special_tokens import added_token_map
from tokviz.engine.chat.chat_engine import ChatEngine, ChatRequest, ChatResult
from tokviz.engine.step_model import StepModel
from tokviz.panels.base import Panel, error_color, is_dark, monospace_font, notice_colors
from tokviz.panels.model_cue import ModelCue, describe_step
from tokviz.panels.token_view.flow_view import TokenFlowView

from .messages import MessageList
from .template_view import TemplateView

SAMPLE_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France? 🇫🇷"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Japan?  "},
]
SEVERITY_MARKS = {"error": "✖", "warning": "⚠", "info": "ℹ"}
CONFIG_FILES = ("tokenizer_config.json", "chat_template.jinja")


class _PromptView(TokenFlowView):
    def placeholder(self) -> str:
        return "Open a model folder (tokenizer.json and tokenizer_config.json with a chat template) to see this " \
               "conversation as the model sees it."


class ChatPanel(Panel):
    """The Chat view. Scripting: `open_folder(path)`, `set_messages(list)`, `messages()`,
    `set_generation_prompt(on)`, `set_specials_as_text(on)`, `wait_idle()`, ``result``."""

    PANEL_ID = "chat"
    TITLE = "Chat"
    DEFAULT_AREA = Qt.DockWidgetArea.RightDockWidgetArea

    result_shown = Signal()  # a render (or a template error) is on screen

    def __init__(self, step_model: StepModel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: ChatModel | None = None
        self.result: ChatResult | None = None
        self.folder_dialog: Callable[[], str | None] = self._ask_folder
        self._current = -1  # the message being edited (its tokens are outlined)
        self._following = False  # the model came from the window's tokenizer
        self.engine = ChatEngine(self)
        self._build()
        self.engine.model_loaded.connect(self._on_engine_model_loaded)
        self.engine.load_failed.connect(self._on_engine_load_failed)
        self.engine.rendered.connect(self._on_engine_rendered)
        self.engine.render_failed.connect(self._on_engine_render_failed)
        self.step_model = step_model
        self.messages_view.set_messages(SAMPLE_MESSAGES)
        self._window_folder: Path | None = None  # the folder of the window's loaded tokenizer
        if step_model is not None:
            step_model.timeline_changed.connect(self._on_step_model_timeline_changed)
            step_model.step_changed.connect(self._update_cue)
            if step_model.timeline is not None:  # made after a tokenizer was opened: follow it now
                self._on_step_model_timeline_changed()

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        self.open_button = QToolButton(objectName="chat_open", text="Open model folder…")
        self.open_button.setToolTip("A Hugging Face model folder: tokenizer.json and tokenizer_config.json")
        self.open_button.clicked.connect(self._on_open_button_clicked)
        self.model_label = ModelCue("Chat tokenizer", object_name="chat_model")  # warns when not the window's
        self.model_label.setText("No model")
        self.load_button = QToolButton(objectName="chat_load_messages", text="Open messages…")
        self.load_button.setToolTip('A JSON list of {"role", "content"} objects (the file tokviz chat -f reads)')
        self.load_button.clicked.connect(self._on_load_button_clicked)
        self.messages_dialog: Callable[[], str | None] = self._ask_messages_file
        self.generation_box = QCheckBox("Generation prompt", objectName="chat_generation_prompt")
        self.generation_box.setToolTip("add_generation_prompt: end with the start of an assistant turn")
        self.specials_box = QCheckBox("Specials as text", objectName="chat_specials_as_text")
        self.specials_box.setToolTip("Encode special-token text typed inside messages as text; the template's "
                                     "own control tokens stay tokens")
        self.whitespace_box = QCheckBox("Whitespace", objectName="chat_whitespace")
        self.whitespace_box.setToolTip("Show spaces, tabs and newlines as ␣ ⇥ ↵")
        self.mask_box = QCheckBox("Assistant mask", objectName="chat_assistant_mask")
        self.mask_box.setToolTip("Outline the tokens inside the template's {% generation %} blocks: what "
                                 "return_assistant_tokens_mask marks as the assistant's (trained on)")
        self.mask_box.toggled.connect(self._on_mask_box_toggled)
        self.template_box = QComboBox(objectName="chat_template_name")
        self.template_box.setToolTip("The model's named chat templates (default, tool_use, ...)")
        self.template_box.hide()
        bar = QHBoxLayout()  # two short rows: a dock can be narrow
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.open_button)
        bar.addWidget(self.model_label, 1)
        bar.addWidget(self.template_box)
        bar.addWidget(self.load_button)
        options = QHBoxLayout()
        options.setContentsMargins(0, 0, 0, 0)
        for w in (self.generation_box, self.specials_box, self.whitespace_box, self.mask_box):
            options.addWidget(w)
        options.addStretch(1)
        self.banner = QLabel(objectName="chat_banner", wordWrap=True)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setContentsMargins(8, 4, 8, 4)
        self.banner.hide()

        self.messages_view = MessageList()
        self.messages_view.setObjectName("chat_messages")
        self.view = _PromptView()
        self.view.setObjectName("chat_prompt")
        self.view.set_tooltip_provider(self.tooltip_for)
        self.view.token_clicked.connect(self._on_view_token_clicked)
        self.findings = QListWidget(objectName="chat_findings")
        self.findings.setWordWrap(True)
        self.findings.currentRowChanged.connect(self._on_findings_row_changed)
        self.template_view = TemplateView()  # wrapped, numbered by template line, highlighted
        middle = QSplitter(Qt.Orientation.Vertical)
        middle.addWidget(self.view)
        middle.addWidget(self.findings)
        middle.setSizes([300, 120])
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        for w in (self.messages_view, middle, self.template_view):
            self.splitter.addWidget(w)
            w.setMinimumWidth(60)
        self.splitter.setSizes([300, 420, 380])
        self.status = QLabel(objectName="chat_status", wordWrap=True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(bar)
        layout.addLayout(options)
        layout.addWidget(self.banner)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status)

        self.messages_view.edited.connect(self._on_messages_view_edited)
        self.messages_view.row_focused.connect(self._on_messages_view_row_focused)
        for box in (self.generation_box, self.specials_box, self.whitespace_box):
            box.toggled.connect(lambda _on: self.refresh())
        self.template_box.currentTextChanged.connect(self._on_template_box_changed)
        self._update_fonts()
        self._apply_palette()

    def _update_fonts(self) -> None:
        if hasattr(self, "template_view"):
            self.template_view.setFont(monospace_font(self.font()))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "view"):
            self._apply_palette()
        super().changeEvent(event)

    def _apply_palette(self) -> None:
        self.view.set_token_palette(token_palette(dark=is_dark(self.palette())))
        bg, fg = notice_colors(self.palette())
        self.banner.setStyleSheet(f"background:{bg.name()}; color:{fg.name()}; border-radius:4px;")

    # -- scripting surface ----------------------------------------------------------------------

    def open_folder(self, folder: str | Path) -> None:
        """Load a model folder in the background (`result_shown` follows its first render)."""
        self._following = False
        self._load(folder)

    def _load(self, folder: str | Path) -> None:
        self.model_label.setText(f"Loading {Path(folder).name}…")
        self.engine.load(folder)

    def set_messages(self, messages: list[dict]) -> None:
        self.messages_view.set_messages(messages)

    def load_messages(self, path: str | Path) -> bool:
        """Replace the conversation with a MESSAGES.json file; False (the reason in the banner,
        the messages unchanged) when it is not one."""
        try:
            messages = read_messages(path)
        except TokvizError as exc:
            self._show_banner(f"Cannot open these messages: {exc}", error=True)
            return False
        self.banner.hide()
        self.set_messages(messages)
        return True

    def messages(self) -> list[dict]:
        return self.messages_view.messages()

    def set_generation_prompt(self, on: bool) -> None:
        self.generation_box.setChecked(on)

    def set_specials_as_text(self, on: bool) -> None:
        self.specials_box.setChecked(on)

    def wait_idle(self, timeout_ms: int = 10_000) -> bool:
        """Tests and scripts: run the event loop until nothing is loading or rendering."""
        from PySide6.QtCore import QDeadlineTimer, QEventLoop
        from PySide6.QtWidgets import QApplication

        deadline = QDeadlineTimer(timeout_ms)
        while self.engine.is_pending and not deadline.hasExpired():
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        return not self.engine.is_pending

    def prepare_screenshot(self) -> None:
        self.refresh()
        self.wait_idle()

    def shutdown(self) -> None:
        self.engine.shutdown()

    # -- requests -------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Render the conversation again (off the GUI thread; `result_shown` follows)."""
        if self.model is None:
            return
        req = ChatRequest(self.model, tuple(self.messages()), self.generation_box.isChecked(),
                          self.specials_box.isChecked(), self.whitespace_box.isChecked(),
                          token_palette().size)
        self.engine.request(req)

    @Slot()
    def _on_messages_view_edited(self) -> None:
        self.refresh()

    @Slot(str)
    def _on_template_box_changed(self, name: str) -> None:
        if self.model is not None and name and name != self.model.template_name:
            self.model = self.model.with_template(name)
            self.template_view.set_template(self.model.template)
            self.refresh()

    @Slot(bool)
    def _on_mask_box_toggled(self, _on: bool) -> None:
        if self.result is not None and self.result.render is not None:
            self._show_tokens()
            self.status.setText(self._summary(self.result))

    def _ask_folder(self) -> str | None:
        return QFileDialog.getExistingDirectory(self, "Open model folder") or None

    def _ask_messages_file(self) -> str | None:
        return QFileDialog.getOpenFileName(self, "Open messages", "", "JSON (*.json);;All files (*)")[0] or None

    @Slot()
    def _on_load_button_clicked(self) -> None:
        path = self.messages_dialog()
        if path:
            self.load_messages(path)

    @Slot()
    def _on_open_button_clicked(self) -> None:
        folder = self.folder_dialog()
        if folder:
            self.open_folder(folder)

    @Slot()
    def _on_step_model_timeline_changed(self) -> None:
        """Follow the window's tokenizer when its folder carries a chat template (unless the user
        opened a folder here)."""
        tl = self.step_model.timeline
        source = tl.tokenizer().source if tl is not None and not tl.has_counts else None
        folder = self._window_folder = Path(source).parent.resolve() if source else None
        self._update_cue()
        if tl is None or tl.has_counts or (self.model is not None and not self._following):
            return
        if folder is not None and any((folder / f).is_file() for f in CONFIG_FILES):
            self._following = True
            self._load(folder)

    def shows_window_tokenizer(self) -> bool:
        """The tokenizer here is the one the token view and vocabulary show: the window's loaded
        tokenizer from this folder, at its last step (all of its vocabulary, as a chat uses it)."""
        sm = self.step_model
        return (self.model is not None and sm is not None and self._window_folder is not None
                and self._window_folder == self.model.folder.resolve() and sm.step == sm.n_steps)

    def _update_cue(self, *_args) -> None:
        """Name the tokenizer the prompt is encoded with; a warning when the token view and the
        vocabulary beside this view show another tokenizer or step."""
        if self.model is None:
            return
        m = self.model
        differs = self.step_model is not None and not self.shows_window_tokenizer()
        text = f"<b>{html.escape(m.folder.name)}</b> · whole vocabulary"
        tip = f"{m.folder}\nChat template from {m.template_origin}"
        if differs:
            window = describe_step(self.step_model)
            text += f" ⚠ the token view and vocabulary show {window}"
            tip += ("\nThe token view and vocabulary beside this view show another tokenizer or step: "
                    + re.sub(r"<[^>]+>", "", window))
        text += f" · template: {html.escape(m.template_origin)}"
        self.model_label.set_cue(text, tip=tip, differs=differs)

    # -- results --------------------------------------------------------------------------------

    @Slot(object)
    def _on_engine_model_loaded(self, model: ChatModel) -> None:
        self.model = model
        self._update_cue()
        self.template_box.blockSignals(True)
        self.template_box.clear()
        self.template_box.addItems(list(model.templates))
        self.template_box.setCurrentText(model.template_name)
        self.template_box.blockSignals(False)
        self.template_box.setVisible(len(model.templates) > 1)
        self.template_view.set_template(model.template)
        self.banner.hide()
        self.refresh()

    @Slot(str)
    def _on_engine_load_failed(self, message: str) -> None:
        self.model_label.setText("No model" if self.model is None else self.model_label.text())
        self._show_banner(f"Cannot open this model folder: {message}", error=True)
        self.result_shown.emit()

    @Slot(str)
    def _on_engine_render_failed(self, message: str) -> None:
        self._show_banner(f"Cannot render: {message}", error=True)
        self.result_shown.emit()

    def _show_banner(self, text: str, *, error: bool) -> None:
        color = error_color(self.palette()).name() if error else None
        self.banner.setText(f"<span style='color:{color}'>{html.escape(text)}</span>" if color else html.escape(text))
        self.banner.show()

    @Slot(object)
    def _on_engine_rendered(self, result: ChatResult) -> None:
        self.result = result
        self.template_view.mark_line(result.error.line if result.error else None)
        if result.error is not None:
            self._show_banner(f"The template fails: {result.error}", error=True)
            self.view.clear()
            self.messages_view.show_spans(None)
            where = " (see the template line marked on the right)" if result.error.line else ""
            self.status.setText(f"No prompt: the template failed{where}.")
        else:
            self.banner.hide()
            self._show_tokens()
            self.messages_view.show_spans(result.render.messages)
            self.status.setText(self._summary(result))
        self._show_findings(result)
        self.result_shown.emit()

    def _show_tokens(self, outline: tuple[int, ...] | None = None) -> None:
        """Draw the prompt's tokens, outlining `outline` (default: the message being edited)."""
        r, shown = self.result.render, self.result.display
        labels = shown.labels
        self.view.set_tokens(labels.labels, r.ids, labels.kinds, labels.breaks, shown.slots, groups=shown.groups,
                             captions=shown.captions, differs=self._outlined(outline))

    def _outlined(self, tokens: tuple[int, ...] | None = None) -> list[bool]:
        """Per token: outlined (the given tokens, else the message being edited)."""
        r = self.result.render if self.result is not None else None
        if r is None:
            return []
        if tokens is None and self.mask_box.isChecked():
            return [bool(x) for x in r.assistant_mask]
        if tokens is None:
            m = r.messages[self._current] if 0 <= self._current < len(r.messages) else None
            tokens = tuple(range(*m.tokens)) if m is not None and m.tokens is not None else ()
        if not tokens:
            return []
        marked = [False] * len(r.ids)
        for i in tokens:
            marked[i] = True
        return marked

    def _summary(self, result: ChatResult) -> str:
        r = result.render
        n, template = len(r.ids), r.template_tokens
        per = " · ".join(f"{m.index + 1} {m.role}: {m.n_tokens:,}" for m in r.messages if m.tokens is not None)
        mask = ""
        if self.mask_box.isChecked():
            mask = (f" · assistant mask {sum(r.assistant_mask):,} tokens" if r.has_generation
                    else " · no {% generation %} block: the assistant mask is empty")
        return (f"<b>{n:,} tokens</b> · {len(r.text):,} characters · template {template:,} · messages {n - template:,}"
                f" ({per}){mask} · rendered in {result.seconds * 1000:.0f} ms")

    def _show_findings(self, result: ChatResult) -> None:
        self.findings.blockSignals(True)
        self.findings.clear()
        for f in result.findings:
            item = QListWidgetItem(f"{SEVERITY_MARKS[f.severity]} {f.rule}: {f.text}")
            item.setToolTip(f.one_line())
            if f.severity == "error":
                item.setForeground(error_color(self.palette()))
            self.findings.addItem(item)
        if not result.findings:
            self.findings.addItem(QListWidgetItem("✓ No findings: none of the classic prompt bugs."))
        self.findings.blockSignals(False)

    # -- interaction ----------------------------------------------------------------------------

    @Slot(int)
    def _on_messages_view_row_focused(self, index: int) -> None:
        self._current = index
        if self.result is not None and self.result.render is not None:
            self._show_tokens()
            m = self.result.render.messages[index] if index < len(self.result.render.messages) else None
            if m is not None and m.tokens is not None and m.tokens[1] > m.tokens[0]:
                self.view.select(m.tokens[0])

    @Slot(int)
    def _on_findings_row_changed(self, row: int) -> None:
        if self.result is None or not 0 <= row < len(self.result.findings):
            return
        f = self.result.findings[row]
        if f.line:  # a template line: the numbers beside the source are the linter's
            self.template_view.mark_line(f.line)
        if f.tokens and self.result.render is not None:
            self._show_tokens(f.tokens)
            self.view.select(min(f.tokens))

    @Slot(int)
    def _on_view_token_clicked(self, index: int) -> None:
        r = self.result.render if self.result is not None else None
        if r is None:
            return
        for m in r.messages:
            if m.tokens is not None and m.tokens[0] <= index < m.tokens[1] and m.index < len(self.messages_view.rows):
                self.messages_view.ensureWidgetVisible(self.messages_view.rows[m.index])

    def tooltip_for(self, index: int) -> str:
        """Token `index`: id, text, bytes, characters, the message it belongs to, added-token flags."""
        r = self.result.render if self.result is not None else None
        if r is None or not 0 <= index < len(r.ids):
            return ""
        tid, data, (a, b) = r.ids[index], r.encoding.tokens[index], r.encoding.spans[index]
        lines = [f"<b>id {tid}</b> · token {index:,} of {len(r.ids):,}",
                 f"text: <code>{html.escape(visible_token(data))}</code>", f"bytes: <code>{hex_bytes(data)}</code>",
                 f"characters {a:,}–{b:,}"]
        owner = next((m for m in r.messages if m.tokens is not None and m.tokens[0] <= index < m.tokens[1]), None)
        lines.append(f"message {owner.index + 1} ({html.escape(owner.role)})" if owner else "written by the template")
        if r.has_generation:
            lines.append(f"assistant mask: {r.assistant_mask[index]}")
        tok = self.result.request.model.tokenizer
        added = added_token_map(tok).get(tid) if index in r.encoding.special else None
        if added is not None:
            lines.append(f"<b>{html.escape(added.describe())}</b>")
        return "<br>".join(lines)
