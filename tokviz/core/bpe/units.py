"""Base units: what BPE starts from before any merge.

``bytes``: 256 base tokens, id = byte value. ``chars``: the distinct characters of the corpus,
sorted by code point (plus the end-of-word marker as one symbol). An optional end-of-word marker
(``_``, ``</w>``) is appended to every chunk; with byte units it is appended as its UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tokviz.core.errors import SettingsError

UNITS = ("bytes", "chars")


@dataclass(frozen=True)
class BaseVocab:
    """The base symbols of a tokenizer and how a chunk becomes base ids."""

    units: str
    symbols: tuple[str, ...] = ()  # chars units only: the base symbols, id = index
    end_of_word: str | None = None

    def __post_init__(self) -> None:
        if self.units not in UNITS:
            raise SettingsError(f"unknown units {self.units!r}; choose bytes or chars")
        if self.end_of_word == "":
            raise SettingsError("the end-of-word marker cannot be empty")

    @classmethod
    def from_chunks(cls, units: str, chunks: Iterable[str], end_of_word: str | None = None) -> "BaseVocab":
        """Build the base vocabulary for `units` from the corpus chunks."""
        if units != "chars":
            return cls(units, (), end_of_word)
        chars: set[str] = set()
        for chunk in chunks:
            chars.update(chunk)
        if end_of_word is not None:
            chars.add(end_of_word)
        return cls(units, tuple(sorted(chars)), end_of_word)

    @property
    def size(self) -> int:
        return 256 if self.units == "bytes" else len(self.symbols)

    def token_bytes(self) -> list[bytes]:
        """Bytes of each base id (UTF-8 of the symbol for character units)."""
        if self.units == "bytes":
            return [bytes([i]) for i in range(256)]
        return [s.encode("utf-8") for s in self.symbols]

    def index(self) -> dict[str, int]:
        """Symbol -> id for character units."""
        return {s: i for i, s in enumerate(self.symbols)}

    def symbolize(self, chunk: str, *, index: dict[str, int] | None = None, unk_id: int = -1) -> list[int]:
        """Base ids of `chunk` with the end-of-word marker appended; unknown chars get `unk_id`."""
        if self.units == "bytes":
            data = chunk.encode("utf-8")
            if self.end_of_word is not None:
                data += self.end_of_word.encode("utf-8")
            return list(data)
        index = self.index() if index is None else index
        ids = [index.get(c, unk_id) for c in chunk]
        if self.end_of_word is not None:
            ids.append(index[self.end_of_word])
        return ids
