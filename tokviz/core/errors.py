"""Errors the core raises for problems a user can fix. Each message says what to do."""


class TokvizError(Exception):
    """Base class: a problem with the user's input or settings, not a bug."""


class CorpusError(TokvizError):
    """A corpus file or text that cannot be used (missing, empty, binary, not UTF-8, malformed)."""


class SplitError(TokvizError):
    """An unknown pre-tokenization name or an invalid regular expression."""


class SettingsError(TokvizError):
    """Training settings that cannot work together (e.g. an impossible vocabulary size)."""


class ModelFormatError(TokvizError):
    """A saved model file that is corrupt, truncated, or of an unknown format version."""


class EncodeError(TokvizError):
    """Text or ids that a tokenizer cannot encode or decode (disallowed special token, bad id)."""


class PatternTimeout(TokvizError):
    """A regular expression from a file or typed by a user ran past its time limit (it backtracks
    catastrophically on this text); the message names the pattern and the limit."""


class Cancelled(Exception):
    """Raised inside long work (counting, training, rendering) when the caller's `should_stop`
    returns True: not an error, so not a `TokvizError`."""
