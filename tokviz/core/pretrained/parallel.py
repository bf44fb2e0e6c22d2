"""Encoding a big text in two processes: the second half in a forked child, the first here.

Only where forking is safe and cheap: on Linux, called from the main thread with no other Python
thread alive (a GUI encodes on worker threads, so it never takes this path). The child runs
nothing but this module's pure-Python encoding and leaves with ``os._exit``; native threads of
libraries (OpenBLAS's idle pool) hold no lock it needs, so Python 3.12's warning about forking a
multi-threaded process is silenced for this one call. The child inherits the loaded tokenizer (no reload, no pickling of the
vocabulary), encodes its half and sends back the ids (4 bytes each) and the chunks it newly
cached, so the parent's cache ends as warm as after a one-process run. Any failure in the child
falls back to encoding its half here. What this leaves out: where the text may be cut
(`fastsplit.cut_points`).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading
import warnings
from array import array
from collections.abc import Callable

from tokviz.core.io.pipes import read_exact, write_all

PARALLEL_MIN_CHARS = 1_000_000  # below this the fork costs more than it saves


def can_fork() -> bool:
    """True on Linux in the main thread when no other Python thread runs."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and threading.current_thread() is threading.main_thread()
        and threading.active_count() == 1
    )


def run_halves(
    encode: Callable[[str], list[int]],
    new_entries: Callable[[], dict],
    merge_entries: Callable[[dict], None],
    text: str,
    cut: int,
) -> list[int]:
    """``encode(text[:cut]) + encode(text[cut:])``, the second half in a forked child.

    `new_entries()` (called in the child after encoding) returns the cache entries it added;
    `merge_entries(d)` adds them to the parent's cache.
    """
    read_fd, write_fd = os.pipe()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return encode(text[:cut]) + encode(text[cut:])
    if pid == 0:  # the child: encode, send, leave without running any cleanup of the parent's
        status = 0
        try:
            os.close(read_fd)
            ids = array("I", encode(text[cut:])).tobytes()
            extra = pickle.dumps(new_entries(), protocol=pickle.HIGHEST_PROTOCOL)
            write_all(write_fd, struct.pack("<QQ", len(ids), len(extra)) + ids + extra)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        left = encode(text[:cut])
        try:
            n_ids, n_extra = struct.unpack("<QQ", read_exact(read_fd, 16))
            right = array("I")
            right.frombytes(read_exact(read_fd, n_ids))
            merge_entries(pickle.loads(read_exact(read_fd, n_extra)))
            right_ids = right.tolist()
        except (EOFError, OSError, struct.error, pickle.UnpicklingError):
            right_ids = encode(text[cut:])
    finally:
        os.close(read_fd)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return left + right_ids
