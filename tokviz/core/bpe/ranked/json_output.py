"""`RankBpeJson`: the JSON of a one-off encode of a big text (the command line's ``--json``) made
in two processes from start to end, as a mixin of `RankBpeTokenizer`.

Each process encodes its half of the text (cut between two chunks), derives the spans from the
ids and formats its share of the three arrays; the parent writes its texts and the child's one
after the other. The output equals ``json.dumps(tok.encode(text, allowed_special="all").to_json())``:
the second half's spans are moved by where it starts and its empty spans' indices by the first
half's number of tokens. What this leaves out: texts holding special tokens, smaller texts, one
process allowed and systems without fork (the caller then takes `encode` and `Encoding.write_json`).
"""

from __future__ import annotations

from collections.abc import Callable

from tokviz.core.json_columns import empty_spans, joined, section_texts, write_sections
from tokviz.core.processes import halves
from tokviz.core.processes.fork import here_and_forked
from tokviz.core.text.split import split_specials


class RankBpeJson:
    """The one-off JSON half of `RankBpeTokenizer` (it holds `_half_cut`, `_ids`, `_span_table`, ...)."""

    def write_json_once(self, text: str, write: Callable[[str], object], *, step: int | None = None,
                        processes: int = 1) -> bool:
        """Write the JSON of ``encode(text, step=step, allowed_special="all")`` in two processes
        (`processes` at least 2) and return True; return False, having written nothing, where this
        does not apply (see the module docstring) or a half's tokens leave text out."""
        if len(text) < halves.PARALLEL_MIN_CHARS or split_specials(text, tuple(self.special_tokens)) != [
                (0, len(text), False)]:
            return False
        cut = self._half_cut(text, processes)
        if cut is None:
            return False
        thr = self._threshold(step)
        self._span_table()  # built once here, not in both processes
        first, second = here_and_forked(lambda: self._json_half(text[:cut], 0, thr),
                                        lambda: self._json_half(text[cut:], cut, thr))
        if first is None or second is None:
            return False
        (texts_a, empty_a, n_a), (texts_b, empty_b, _) = first, second
        write_sections(write, joined(texts_a, texts_b), empty_a + [n_a + k for k in empty_b])
        return True

    def _json_half(self, part: str, offset: int, thr: int) -> tuple[list[str], list[int], int] | None:
        """The three arrays' texts of `part` (which starts at `offset` in the text), the indices
        of its empty spans and its number of tokens; None when its tokens leave text out."""
        ids = self._ids(part, thr, self._cache(thr))
        cols = self._span_table().parts_columns(ids, [(0, len(part), False)], [len(ids)])
        if cols is None:
            return None
        starts, ends = cols
        if offset:
            if hasattr(starts, "tolist"):  # numpy arrays
                starts, ends = starts + offset, ends + offset
            else:
                starts, ends = [s + offset for s in starts], [e + offset for e in ends]
        vocab = self._vocab
        hex_of = {i: vocab[i].hex() for i in set(ids)}
        return section_texts(ids, ids, hex_of, starts, ends), empty_spans(starts, ends), len(ids)
