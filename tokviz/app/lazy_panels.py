"""The panels a window makes only when first needed: embedding similarity, positional encodings,
the Compare panel, the Chat view and the glitch-token finder.

They are tabs that no first screen shows, and most draw with pyqtgraph, whose import alone takes
about a third of a second (the glitch finder brings the weights readers and scorers): their docks
are there from the start (the layout and View > Panels know them), and the panels are built the
first time one is shown or asked for, or right after the window's first paint
(`tokviz.app.docks.DockManager.add_later`).
"""

from __future__ import annotations

from collections.abc import Callable

from tokviz.engine.step_model import StepModel
from tokviz.engine.workspace import Workspace

from .docks import DockManager


def add_heatmap_docks(docks: DockManager, workspace: Workspace) -> None:
    """Dock the two heatmap panels as tabs of the corpus, built on first need; they show the
    tokens of `workspace`'s text."""

    def build() -> list:
        from tokviz.panels.heatmaps.embedding_panel import EmbeddingPanel
        from tokviz.panels.heatmaps.positional_panel import PositionalPanel

        embeddings, positional = EmbeddingPanel(), PositionalPanel()
        embeddings.attach(workspace, followers=(positional,))  # it shows the same tokens
        embeddings.text_tokens_changed.connect(positional.set_text_tokens)
        embeddings.positional_trained.connect(positional.set_trained_table)
        return [embeddings, positional]

    docks.add_later("embeddings", "Embedding similarity", build, tabify_with="corpus")
    docks.add_later("positional", "Positional encodings", build, tabify_with="corpus")


def add_compare_dock(docks: DockManager, step_model: StepModel, workspace: Workspace,
                     on_token_selected: Callable[[object, int], None]) -> None:
    """Dock the Compare panel as a tab of the corpus, built on first need; a token picked in it
    goes to `on_token_selected(timeline, id)`."""

    def build() -> list:
        from tokviz.panels.compare.panel import ComparePanel

        panel = ComparePanel(step_model, workspace)
        panel.token_selected.connect(on_token_selected)
        return [panel]

    docks.add_later("compare", "Compare metrics", build, tabify_with="corpus", scroll=True)  # 500 px tall


def add_chat_dock(docks: DockManager, step_model: StepModel) -> None:
    """Dock the Chat view as a tab of the corpus (Alt+6), built on first need (Jinja's import)."""

    def build() -> list:
        from tokviz.panels.chat.panel import ChatPanel

        return [ChatPanel(step_model)]  # follows a tokenizer whose folder has a chat template

    docks.add_later("chat", "Chat", build, tabify_with="corpus", shortcut="Alt+6")


def add_glitch_dock(docks: DockManager, step_model: StepModel, workspace: Workspace,
                    on_token_selected: Callable[[int], None]) -> None:
    """Dock the glitch-token finder as a tab of the vocabulary, built on first need; a token picked
    in it goes to `on_token_selected(id)`."""

    def build() -> list:
        from tokviz.panels.glitch_panel import GlitchPanel

        panel = GlitchPanel(step_model, corpus_text=workspace.corpus_sample, corpus_changed=workspace.corpus_changed)
        panel.token_selected.connect(on_token_selected)
        return [panel]

    docks.add_later("glitches", "Glitch tokens", build, tabify_with="vocabulary")
