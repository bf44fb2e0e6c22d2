"""How the command line reports a problem: one line on stderr, whatever the message holds."""

from __future__ import annotations


def one_line(message: str) -> str:
    r"""`message` on one line: names taken from a file (a key with a newline in it) are escaped.

    >>> one_line("unknown settings: a\nb")
    'unknown settings: a\\nb'
    """
    return message.replace("\r", "\\r").replace("\n", "\\n")
