"""Reading a failed command's stderr: argparse's usage lines (only when the parser found the
mistake) and then exactly one error line, never a traceback."""

from __future__ import annotations


def usage_and_error(err: str) -> tuple[str, str]:
    """(usage, error line) of a failed command's stderr; usage is "" when none was printed.

    >>> usage_and_error("usage: tokviz merges [-h] MODEL\\ntokviz merges: the following arguments are required: MODEL\\n")
    ('usage: tokviz merges [-h] MODEL', 'tokviz merges: the following arguments are required: MODEL')
    >>> usage_and_error("tokviz: nope.json: no such file\\n")
    ('', 'tokviz: nope.json: no such file')
    """
    assert err.endswith("\n") and "Traceback" not in err, err
    lines = err.splitlines()
    if not lines[0].startswith("usage: tokviz"):
        assert len(lines) == 1, err
        return "", lines[0]
    assert len(lines) >= 2 and all(line.startswith(" ") for line in lines[1:-1]), err  # wrapped usage
    assert not lines[-1].startswith(" "), err
    return "\n".join(lines[:-1]), lines[-1]
