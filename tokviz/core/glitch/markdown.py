"""A glitch report as Markdown, laid out as cohere-ai/magikarp lays out its per-model reports: a
summary of the tokenizer and the evidence, then one section per kind of finding (the candidates
ranked by score, tokens whose text never encodes back to them, tokens that are not text on their
own), each a table of id, token and why.

What this leaves out: finding and scoring (`report`, `score`); the command line that prints it.
"""

from __future__ import annotations

from .report import GlitchReport
from .score import REASONS, GlitchRow, why_text

UNREACHABLE = ("split", "merge", "normalized", "viterbi")


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, line breaks shown as escapes.

    >>> cell("a|b\\n")
    'a\\\\|b\\\\n'
    """
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n").replace("\r", "\\r")


def token_text(token: bytes) -> str:
    """A token as the reports show it: text with a leading space as ``▁``; bytes that are not
    text as ``<0xNN>``.

    >>> token_text(b" SolidGoldMagikarp"), token_text(b"\\xe3\\x81")
    ('▁SolidGoldMagikarp', '<0xE3><0x81>')
    """
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"<0x{b:02X}>" for b in token)
    return text.replace(" ", "▁")


def _table(rows: list[GlitchRow], *, ranked: bool) -> list[str]:
    head = ["| rank | id | token | score | count | why |", "|---:|---:|---|---:|---:|---|"] if ranked else \
        ["| id | token | count | why |", "|---:|---|---:|---|"]
    lines = []
    for k, r in enumerate(rows, 1):
        token = f"`{cell(token_text(r.token))}`"
        why = cell(why_text(r))
        lines.append(f"| {k} | {r.id} | {token} | {r.score:.3f} | {r.count:,} | {why} |" if ranked
                     else f"| {r.id} | {token} | {r.count:,} | {why} |")
    return head + lines if lines else ["(none)"]


def markdown_report(report: GlitchReport, *, model: str, top: int = 50, listed: int = 200,
                    weights_note: str | None = None) -> str:
    """The report of `report` for the tokenizer called `model`: the `top` candidates, then up to
    `listed` tokens of each round-trip failure. `weights_note`: the rows are ranked with the model's
    weights too (`tokviz.core.weights`), as that note says."""
    c = report.coverage
    unreachable = [r for r in report.rows if r.reason in UNREACHABLE]
    undecodable = [r for r in report.rows if r.reason == "partial_utf8"]
    lines = [
        f"# Glitch-token report: {model}",
        "",
        "## Summary",
        "",
        f"- Ordinary tokens checked: {report.n_tokens:,}",
        f"- Unreachable (their text encodes to other tokens): {len(unreachable):,}",
        f"- Undecodable ({REASONS['partial_utf8'].split(': ', 1)[1]}): {len(undecodable):,}",
        f"- Never in the corpus: {report.n_unused:,}",
        f"- Corpus: {c.corpus_chars:,} characters, {c.corpus_tokens:,} tokens",
        f"- {c.note()}",
        *([] if weights_note is None else [f"- Model weights: {weights_note}"]),
        "",
        *(["Evidence comes from the tokenizer and the corpus only, not from model weights: a high score says",
           "a model probably saw the token rarely in training; check it with the model before relying on it."]
          if weights_note is None else
          ["Candidates are ranked by both pieces of evidence: the geometric mean of a token's rank by score and",
           "its rank by the weights' indicator (Magikarp's, from the embedding matrices)."]),
        "",
        f"## Candidates (top {min(top, len(report.rows)):,} by {'score' if weights_note is None else 'score and weights'})",
        "",
        *_table(report.rows[:top], ranked=True),
        "",
        f"## Unreachable tokens ({len(unreachable):,})",
        "",
        *_table(unreachable[:listed], ranked=False),
        *(["", f"… and {len(unreachable) - listed:,} more."] if len(unreachable) > listed else []),
        "",
        f"## Undecodable tokens ({len(undecodable):,})",
        "",
        *_table(undecodable[:listed], ranked=False),
        *(["", f"… and {len(undecodable) - listed:,} more."] if len(undecodable) > listed else []),
        "",
    ]
    return "\n".join(lines)
