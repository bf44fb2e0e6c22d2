"""Comparing tokenizers off the GUI thread: the job the Compare panel gives a `TaskEngine`.

`run_comparison` measures each model on a text (`tokviz.core.compare.iter_compare`), reports
progress after every document of every model, and stops between documents when asked. A model
that cannot be opened or measured gets an error in its result; the others still run.
`open_any_model` opens what ``tokviz encode`` opens: a tokviz model file, a tokenizer file or
folder, or a known name such as ``cl100k_base``. What this leaves out: the metrics (core), the
widgets (`tokviz.panels.compare`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from tokviz.core import Cancelled
from tokviz.core.compare import Comparison, FileSource, ModelSpec, iter_compare, prepare_documents


def open_any_model(source: str, pattern: str | None = None):
    """A tokviz model (BPE, WordPiece, Unigram) or any tokenizer tokviz reads, as a timeline
    (the one loader, `tokviz.core.loading.open_timeline`)."""
    from tokviz.core.loading import open_timeline

    return open_timeline(source, pattern=pattern)


def run_comparison(text: str | Path, specs: Sequence[ModelSpec], *, by_document: bool = False,
                   reference: int | str | None = None, should_stop: Callable[[], bool],
                   progress: Callable[[str, float], None], processes: int = 1) -> Comparison:
    """Every model's result on `text` (a `Path` is read piece by piece, `FileSource`; per document
    with `by_document`; big pieces encoded by up to `processes` processes); `Cancelled` when
    `should_stop()` turns True between two documents."""
    if isinstance(text, Path):  # read piece by piece, once per model: a big corpus is never held whole
        progress(f"Reading {text.name}…", 0.0)
        text = FileSource(text)
        if not by_document:
            text.check()  # a bad file fails here, not once per model
    docs, ref = prepare_documents(text, reference) if by_document else ([], None)
    results = []
    for e in iter_compare(text, specs, by_document=by_document, documents=docs or None, reference=reference,
                          processes=processes):
        if should_stop():
            raise Cancelled()
        progress(f"Measuring {specs[e.model_index].label}", (e.model_index + e.done / e.total) / e.n_models)
        if e.result is not None:
            results.append(e.result)
    return Comparison(tuple(results), tuple(docs), ref)
