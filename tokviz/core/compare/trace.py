"""Why this tokenization: each stage of a tokenizer's pipeline on one text, side by side.

`trace_pipeline(timeline, text, step)` records what the tokenizer does with `text` at step k:

1. ``pieces``: the words the model runs on, normalized and pre-tokenized (a byte-level
   tokenizer's ``Ġ`` characters written back as the text they stand for, so pieces compare
   across tokenizers);
2. ``segmentation``: for each piece, how the model cut it: the merges applied in rank order
   (BPE families), the greedy longest matches (WordPiece) or the best Viterbi path with its
   log-probability (Unigram);
3. ``tokens``: the tokens of the whole text;
4. ``ids``: their ids.

`first_divergence(traces)` names the first stage where the traces differ: the question behind
most "different ids" reports (a leading space after a special token, a normalizer, digit
splitting). A tokenizer that does not say how it pre-tokenizes (no ``chunks``) is traced with its
settings' split, or as one piece. What this leaves out: drawing.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokviz.core.display.tokens import visible_token

STAGES = ("pieces", "segmentation", "tokens", "ids")


@dataclass(frozen=True)
class PipelineTrace:
    model: str
    step: int | None
    stages: dict[str, tuple[str, ...]]  # stage name (STAGES) -> its values, in order


def pipeline_pieces(timeline, tok, text: str) -> list[str]:
    """The pieces the model segments one by one: the tokenizer's ``chunks``, else its settings'
    split, else the whole text."""
    chunks = tok.chunks(text)  # None: the tokenizer has no pre-tokenizer
    if chunks is not None:
        return list(chunks)
    split = getattr(timeline.settings, "split", None)
    if isinstance(split, str):
        from tokviz.core.text.split import parse_split

        return parse_split(split).chunks(text)
    return [text] if text else []


def _readable(tok, piece: str) -> str:
    """A byte-level tokenizer's piece (``Ġhello``) as the text it stands for (`` hello``)."""
    if not tok.byte_level:
        return piece
    from tokviz.core.formats.tokenizer_json.pretokenizers import CHAR_BYTE

    try:
        return bytes(CHAR_BYTE[c] for c in piece).decode("utf-8", errors="replace")
    except KeyError:
        return piece


def _segmentation(tok, piece: str, step: int | None) -> str:
    """How the model cut `piece` (its text), in one line: the steps, then ``= the tokens``."""
    found = tok.explain(piece, step=step)
    if found is None:  # no steps to show: just the tokens
        return "= " + " ".join(visible_token(tok.token_bytes(i)) for i in tok.encode_ids(piece, step=step))
    best = getattr(found, "best", None)
    if best is not None:  # a Unigram lattice: the best path and its log-probability
        pieces = " | ".join(visible_token(tok.token_bytes(i)) for i in best.ids)
        return f"best path {pieces} (log p {best.log_prob:.2f})"
    parts, final = [], ()
    for record in found:
        pair = getattr(record, "pair", None)
        if pair is not None:  # a merge: a + b -> ab (rank)
            a, b = (visible_token(tok.token_bytes(i)) for i in pair)
            parts.append(f"{a}+{b}→{visible_token(tok.token_bytes(record.id))} ({record.rank})")
        if hasattr(record, "tried"):  # a greedy longest match
            final += (record.token,)
        elif getattr(record, "ids", None) is not None:  # the segmentation after this step
            final = tuple(visible_token(tok.token_bytes(i)) for i in record.ids)
    return ", ".join(parts + ["= " + " ".join(final)]) if final else ", ".join(parts) or "(no merge)"


def trace_pipeline(timeline, text: str, *, step: int | None = None, label: str = "") -> PipelineTrace:
    """Every stage of `timeline`'s tokenizer on `text` at `step` (see the module docstring).

    >>> from tokviz.core import TrainSettings, train
    >>> tl = train(TrainSettings(merges=2, units="chars", split="whitespace"), texts=["abab ab"])
    >>> t = trace_pipeline(tl, "ab aba")
    >>> t.stages["pieces"], t.stages["segmentation"], t.stages["tokens"]
    (('ab', 'aba'), ('a+b→ab (0), = ab', 'a+b→ab (0), = ab a'), ('ab', 'ab', 'a'))
    >>> trace_pipeline(tl, "ab  b").stages["pieces"]  # (the whitespace split drops the spaces)
    ('ab', 'b')
    """
    tok = timeline.tokenizer()
    pieces = pipeline_pieces(timeline, tok, text)
    enc = tok.encode_ordinary(text, step=step)
    stages = {
        "pieces": tuple(visible_token(_readable(tok, p).encode("utf-8")) for p in pieces),
        "segmentation": tuple(_segmentation(tok, _readable(tok, p), step) for p in pieces),
        "tokens": tuple(visible_token(t) for t in enc.tokens),
        "ids": tuple(str(i) for i in enc.ids),
    }
    return PipelineTrace(label, step, stages)


def first_divergence(traces: list[PipelineTrace]) -> str | None:
    """The first stage whose values are not the same in every trace (None: they all agree).
    Segmentations are compared by the tokens they end in, as their records differ by family."""
    for stage in STAGES:
        if stage == "segmentation":
            continue
        if len({t.stages[stage] for t in traces}) > 1:
            return stage
    return None
