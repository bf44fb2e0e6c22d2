"""One glitch score per token, with its parts and a "why" text.

``score = reach + rarity + absorbed - familiarity``:

- `reach`: 1.5 when the token's own text encodes to other tokens (unreachable: ordinary text
  can never produce it as one token), else 0. A token whose bytes are not text on their own
  (undecodable) is listed as such but gets no reach: such pieces of multi-byte characters occur
  whenever a character is split, so a model does read them (the published under-trained GPT-2
  tokens hold 2 of its 216).
- `rarity`: the sum, over the distinct merged pieces of its merge tree (itself included), of how
  much rarer the corpus holds each piece than its merge rank predicts (`evidence.rarity`),
  each piece's share divided among the tokens whose trees hold it. A token built from pieces
  that only ever served it (GPT-2's `` SolidGoldMagikarp`` from ``GoldMagikarp``, ``Magikarp``,
  ``ikarp``) collects the rarity of the whole chain; a run like ``====`` shared by every longer
  run of ``=`` counts a little for each.
- `absorbed`: `ABSORBED` times how fully later merges swallow the token (`evidence.absorption`):
  ``oreAndOnline`` is merged into ``InstoreAndOnline`` at the very next merge, so BPE's training
  text held it on its own almost never. Against the under-trained GPT-2 tokens cohere-ai/magikarp
  verified with the model, this lifts recall@100 from 0 to about 0.6-0.8 (tests/bench).
- `familiarity`: ``log(1 + count)`` of the token in the corpus, the supporting evidence that a
  model saw it, plus `RUN_FAMILIARITY` when the token is a run of one character (``####``,
  `` ====``, ``~~~~``; `is_run`): separators and ASCII art repeat a character at every length, so
  BPE learns runs by doubling and one length missing from the corpus says little, whereas a name
  like `` SolidGoldMagikarp`` is a single string that either occurs or does not.

What this leaves out: running over a vocabulary (`report`) and drawing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tokviz.core.display.tokens import visible_token

REACH = {"split": 1.5, "merge": 1.5, "normalized": 1.5, "viterbi": 1.5, "partial_utf8": 0.0}
REASONS = {
    "split": "unreachable: the split pattern cuts its text",
    "merge": "unreachable: BPE ends in other tokens",
    "partial_utf8": "undecodable: its bytes are not text on their own",
    "normalized": "unreachable: the normalizer changes its text",
    "viterbi": "unreachable: the Unigram model's best path through its text is another segmentation",
    "unused": "unused: never occurs in the corpus",
    "": "occurs in the corpus",
}
RUN_FAMILIARITY = 1.0  # a run of one character: a familiar form at any length (module doc)
ABSORBED = 3.0  # weight of a token fully swallowed by later merges (module doc)


@dataclass(frozen=True, slots=True)  # slots: 50,000 rows are dropped at each new run, a third as many objects
class GlitchRow:
    """One token's findings. `reason` is a key of `REASONS` (the round trip's failure, else
    ``"unused"`` or ``""``); `ids` what its text encodes to; `rank` its merge (1-based, as
    steps are; None without one); `expected` how often its rank predicts it in the corpus;
    `rare_pieces` the merged pieces of its tree the corpus never holds (itself excluded)."""

    id: int
    token: bytes
    reason: str
    score: float = 0.0
    reach: float = 0.0
    rarity: float = 0.0
    familiarity: float = 0.0
    count: int = 0
    rank: int | None = None
    expected: float = 0.0
    n_pieces: int = 1
    rare_pieces: tuple[bytes, ...] = ()
    ids: tuple[int, ...] = ()
    absorbed: float = 0.0  # its part of the score (see module doc)

    @property
    def fails_round_trip(self) -> bool:
        """Unreachable or undecodable: decoding it and encoding the text does not give it back."""
        return self.reason in REACH


def is_run(token: bytes) -> bool:
    """Whether a token's text is one character repeated at least 3 times, after an optional
    leading space: ``b"####"`` and ``b" ===="`` are runs, ``b"ÃÂÃÂ"`` and ``b"##"`` are not.

    >>> is_run(b" ===="), is_run("ÃÂÃÂ".encode()), is_run(b"##")
    (True, False, False)
    """
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    text = text.removeprefix(" ")
    return len(text) >= 3 and text.count(text[0]) == len(text)


def score_parts(reason: str, rarity: float, count: int, run: bool = False, *,
                absorbed: float = 0.0) -> tuple[float, float, float, float]:
    """(score, reach, rarity, familiarity) of one token; `run`: whether it `is_run`;
    `absorbed`: its absorbed part (already weighed).

    >>> score_parts("merge", 2.0, 0)
    (3.5, 1.5, 2.0, 0.0)
    >>> score_parts("unused", 2.0, 0, run=True, absorbed=3.0)
    (4.0, 0.0, 2.0, 1.0)
    """
    reach = REACH.get(reason, 0.0)
    familiarity = math.log1p(count) + (RUN_FAMILIARITY if run else 0.0)
    return reach + rarity + absorbed - familiarity, reach, rarity, familiarity


def why_text(r: GlitchRow) -> str:
    """The reasons behind a row's score, most telling first."""
    parts = []
    if r.reason in REACH:
        parts.append(REASONS[r.reason] + (f" (its text encodes to {list(r.ids)})" if r.ids else ""))
    if r.count == 0:
        if r.expected >= 1 and r.rank is not None:
            parts.append(f"never in the corpus, though merge {r.rank:,} predicts about {r.expected:,.0f}×")
        else:
            parts.append("never in the corpus")
    else:
        parts.append(f"{r.count:,}× in the corpus" + (f" (merge {r.rank:,} predicts about {r.expected:,.0f}×)"
                                                       if r.rank is not None and r.expected >= 1 else ""))
    if r.absorbed >= ABSORBED / 2:
        parts.append("later merges swallow it almost whenever it forms, so a model rarely saw it on its own")
    if r.rare_pieces:
        shown = ", ".join(visible_token(p) for p in r.rare_pieces[:3]) + ("…" if len(r.rare_pieces) > 3 else "")
        parts.append(f"{len(r.rare_pieces)} of its {r.n_pieces - 1} merged pieces never occur either ({shown})")
    if is_run(r.token):
        parts.append(f"a run of one character, a familiar form at any length (counts {RUN_FAMILIARITY:g} less)")
    return "; ".join(parts)
