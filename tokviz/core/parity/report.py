"""A parity search's result as the command line and the window show it: lines of text, or the
JSON object of ``tokviz diff --json`` (``input``, ``ids_a``, ``ids_b``, ``stage``, ``checked``,
and ``original``, ``origin``, ``detail``, ``why``). What this leaves out: the search."""

from __future__ import annotations

from tokviz.core.compare.trace import STAGES as TRACE_STAGES

from .search import ParityResult


def as_json(result: ParityResult) -> dict:
    """The JSON object; ``input`` and the ids are null when the two agreed on every text."""
    d = result.difference
    if d is None:
        return {"input": None, "ids_a": None, "ids_b": None, "stage": None, "checked": result.checked}
    return {
        "input": d.text, "ids_a": list(d.ids_a), "ids_b": list(d.ids_b), "stage": d.stage,
        "checked": result.checked, "original": d.original, "origin": d.origin, "detail": d.detail,
        "why": {"a": {k: list(v) for k, v in d.traces[0].stages.items()},
                "b": {k: list(v) for k, v in d.traces[1].stages.items()}},
    }


def report_lines(result: ParityResult) -> list[str]:
    """What ``tokviz diff`` prints and the window's Parity tab shows."""
    a, b = result.labels
    d = result.difference
    if d is None:
        return [f"no difference: {a} and {b} agree on all {result.checked:,} texts checked"]
    lines = [
        f"first difference after {result.checked:,} texts, at {d.origin}",
        f"input:  {d.text!r}" + (f"  (shrunk from {d.original!r})" if d.original != d.text else ""),
        f"A {a}: {' '.join(map(str, d.ids_a))}",
        f"B {b}: {' '.join(map(str, d.ids_b))}",
        f"first stage that differs: {d.stage}: {d.detail}",
    ]
    for name, trace in zip(("A", "B"), d.traces):
        lines.append(f"why {name} ({trace.model}):")
        for stage in TRACE_STAGES:
            joiner = " │ " if stage != "segmentation" else " ; "
            lines.append(f"  {stage:>12}: {joiner.join(trace.stages[stage])}")
    return lines
