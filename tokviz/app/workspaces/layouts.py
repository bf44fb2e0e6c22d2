"""The workspaces (View > Workspace): which panels each task shows in front, and how much room each gets.

Pure layout data, no widgets: a `WorkspaceLayout` is a row of columns, left to right, each with a
width ratio; a column is a stack of `Slot`s, top to bottom, each with a height ratio, a panel in
front and the panels tabbed behind it. Every panel of the window is in every workspace exactly once
(`check_covers`), so nothing gets lost when switching: the main view of the task is in front and
big, the rest wait in tabs. `tokviz.app.workspaces.ops.WorkspaceController` applies a layout to the
window's docks and keeps each workspace's own arrangement (saved per workspace in the settings).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """One place in a column: `front` shown, `tabs` behind it, `height` a share of the column."""

    front: str
    height: float
    tabs: tuple[str, ...] = ()

    @property
    def panel_ids(self) -> tuple[str, ...]:
        return (self.front, *self.tabs)


@dataclass(frozen=True)
class Column:
    width: float  # a share of the window's width
    slots: tuple[Slot, ...]


@dataclass(frozen=True)
class WorkspaceLayout:
    key: str
    title: str  # menu text (with its & mnemonic)
    shortcut: str
    summary: str  # status tip: what the workspace is for
    columns: tuple[Column, ...]  # in a window narrower than `WIDE_WINDOW_PX`
    wide: tuple[Column, ...] | None = None  # from `WIDE_WINDOW_PX` (None: `columns` again)

    def columns_for(self, width: int) -> tuple[Column, ...]:
        """The columns for a window `width` pixels wide."""
        return self.wide if self.wide is not None and width >= WIDE_WINDOW_PX else self.columns

    def variants(self) -> list[tuple[Column, ...]]:
        return [self.columns] + ([self.wide] if self.wide is not None else [])


def panel_ids(columns: tuple[Column, ...]) -> list[str]:
    """Every panel `columns` place, in order (fronts and tabs)."""
    return [p for c in columns for s in c.slots for p in s.panel_ids]


def front_ids(columns: tuple[Column, ...]) -> list[str]:
    """The panels in front, left to right and top to bottom."""
    return [s.front for c in columns for s in c.slots]


WIDE_WINDOW_PX = 1600  # from this width a workspace may use its wide layout

# the panels that are rarely the point of a task: tabs wherever there is a tab group
_HEATMAPS = ("embeddings", "positional")

WORKSPACES: tuple[WorkspaceLayout, ...] = (
    WorkspaceLayout(
        "learn", "&Learn", "Ctrl+1", "Train on a corpus and watch it: corpus, training, merge timeline, token view",
        # the merge timeline needs a column's whole height below 1600 px (its candidates show five rows);
        # the heatmaps wait behind it, where a lesson that raises one gives it that room
        (Column(0.50, (Slot("corpus", 0.30, ("compare",)),
                       Slot("training", 0.30, ("lesson", "vocabulary", "glitches")), Slot("token_view", 0.40))),
         Column(0.50, (Slot("timeline", 1.0, ("chat", *_HEATMAPS)),))),
        wide=(Column(0.30, (Slot("corpus", 0.52, ("compare",)),
                            Slot("training", 0.48, ("lesson", "vocabulary", "glitches")))),
              Column(0.70, (Slot("timeline", 0.58, ("chat", *_HEATMAPS)), Slot("token_view", 0.42))))),
    WorkspaceLayout(
        "inspect", "&Inspect a Tokenizer", "Ctrl+2",
        "Look inside a tokenizer: token view, vocabulary and glitch finder",
        (Column(0.46, (Slot("token_view", 1.0, ("timeline", "corpus", "compare", "chat", *_HEATMAPS)),)),
         Column(0.54, (Slot("glitches", 0.55, ("training", "lesson")), Slot("vocabulary", 0.45))))),
    WorkspaceLayout(
        "compare", "&Compare", "Ctrl+3", "Compare tokenizers on the same texts: the Compare panel gets the room",
        (Column(0.66, (Slot("compare", 1.0, ("timeline", "chat", *_HEATMAPS)),)),
         Column(0.34, (Slot("corpus", 0.40, ("training", "lesson")),
                       Slot("token_view", 0.60, ("vocabulary", "glitches")))))),
    WorkspaceLayout(
        "chat", "C&hat", "Ctrl+4", "Chat templates: a conversation rendered and tokenized, beside the token view",
        (Column(0.60, (Slot("chat", 1.0, ("timeline", "corpus", "compare", *_HEATMAPS)),)),
         Column(0.40, (Slot("token_view", 0.58, ("glitches",)),
                       Slot("vocabulary", 0.42, ("training", "lesson")))))),
    WorkspaceLayout(
        "present", "&Present", "Ctrl+5",
        "What presenter mode shows (F5 for full screen): merge timeline and token view side by side, the lesson below",
        (Column(0.5, (Slot("timeline", 1.0, ("corpus", "training", "vocabulary", "glitches")),)),
         Column(0.5, (Slot("token_view", 0.74, ("compare", "chat", *_HEATMAPS)), Slot("lesson", 0.26))))),
)

DEFAULT_WORKSPACE = "learn"


def workspace(key: str) -> WorkspaceLayout:
    for w in WORKSPACES:
        if w.key == key:
            return w
    raise KeyError(f"no workspace {key!r}; workspaces: {', '.join(w.key for w in WORKSPACES)}")


def check_covers(layout: WorkspaceLayout, ids: list[str]) -> None:
    """Raise ValueError unless each variant of `layout` places each of `ids` exactly once and
    nothing else."""
    for columns in layout.variants():
        placed = panel_ids(columns)
        doubles = sorted({p for p in placed if placed.count(p) > 1})
        missing = sorted(set(ids) - set(placed))
        unknown = sorted(set(placed) - set(ids))
        if doubles or missing or unknown:
            raise ValueError(f"workspace {layout.key!r}: placed twice {doubles}, missing {missing}, "
                             f"unknown {unknown}")


def pixel_sizes(ratios: list[float], total: int) -> list[int]:
    """Split `total` pixels by `ratios` (normalised), the rounding left-over on the last one."""
    s = sum(ratios)
    if not ratios or s <= 0:
        return []
    out = [int(total * r / s) for r in ratios]
    out[-1] += total - sum(out)
    return out
