"""The ``tokviz`` command and ``python -m tokviz``: `main`, then leave at once when no window was
involved.

A process that trained a model or opened a large tokenizer holds millions of small objects, and
an ordinary interpreter exit frees them one by one and shuts the compiled kernels' LLVM down: a
tenth to a quarter of a second after the work is done (a Unigram ``tokviz train`` on
tinyshakespeare: 1.55 s -> 1.35 s). Everything the command writes is closed by then (files go
through ``with`` blocks and atomic renames), so the standard streams are flushed and the process
ends with ``os._exit``. With Qt loaded (the window, screenshots, animations) the exit stays the
ordinary one, so Qt can tear its objects down in order.
"""

from __future__ import annotations

import os
import sys

from .main import main, os_error_line


def run() -> None:
    """Run the command in ``sys.argv`` and exit with its status."""
    code = main()
    if "PySide6" in sys.modules:
        raise SystemExit(code)
    exit_now(code)


def exit_now(code: int) -> None:
    """Flush stdout and stderr, then end the process without the interpreter's clean-up. A reader
    that went away (``| head``) is not an error; output that cannot be written (a full disk) is
    one line on stderr and status 2."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    except (OSError, ValueError) as exc:
        code = code or 2
        try:
            print(os_error_line(exc, output=True), file=sys.stderr)
        except (OSError, ValueError):
            pass
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)
