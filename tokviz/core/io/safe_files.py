"""Opening files a user names, safely: only regular files, never more than a limit, never blocking.

A path can name a FIFO with no writer (opening it for reading waits forever), a device such as
``/dev/zero`` (reading never ends) or a socket. Every reader in tokviz opens through `open_regular`:
the file is opened without blocking (``O_NONBLOCK``), checked on the open descriptor (so a file
swapped for a FIFO after a check is still caught) and refused unless it is an ordinary file; whole
reads are bounded by the file's real size and by a limit the caller names.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> fifo = os.path.join(folder, "pipe")
    >>> os.mkfifo(fifo)
    >>> try:
    ...     read_file_bytes(fifo, limit=10)
    ... except TokvizError as exc:
    ...     print(str(exc).replace(folder, "DIR"))
    DIR/pipe: not an ordinary file (a FIFO); tokviz reads ordinary files only

What this leaves out: the formats (each loader parses the bytes it gets).
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tokviz.core.errors import TokvizError

MAX_TEXT_BYTES = 2 << 30  # a corpus: 2 GiB (gutenberg30 is 32 MB)
MAX_MODEL_BYTES = 512 << 20  # a model, tokenizer or session file: 512 MiB (o200k's tokenizer.json is ~30 MB)

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def open_regular(path: str | os.PathLike, error: type[TokvizError] = TokvizError) -> int:
    """A read-only descriptor of the ordinary file at `path` (never blocks); `error` otherwise."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a folder, not a file") from None
    except PermissionError:
        raise error(f"{p}: permission denied") from None
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise error(f"{p}: is a folder, not a file")
        raise error(f"{p}: not an ordinary file ({_kind(mode)}); tokviz reads ordinary files only")
    return fd


def check_regular(path: str | os.PathLike, error: type[TokvizError] = TokvizError) -> int:
    """The size in bytes of the ordinary file at `path`; `error` for anything else."""
    fd = open_regular(path, error)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_file_bytes(path: str | os.PathLike, *, limit: int = MAX_MODEL_BYTES,
                    error: type[TokvizError] = TokvizError) -> bytes:
    """The whole ordinary file at `path`, refused (`error`) past `limit` bytes."""
    return b"".join(read_file_blocks(path, limit=limit, error=error))


def read_file_blocks(path: str | os.PathLike, *, limit: int = MAX_MODEL_BYTES,
                     error: type[TokvizError] = TokvizError, block: int = 1 << 20) -> Iterator[bytes]:
    """The ordinary file at `path` in blocks of at most `block` bytes, in order, refused (`error`)
    past `limit` bytes: before the first block when its size says so, else when it grows past it."""
    fd = open_regular(path, error)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise error(f"{Path(path)}: {size:,} bytes is more than tokviz reads from such a file ({limit:,})")
        total = 0
        while total <= limit:
            data = os.read(fd, min(block, limit + 1 - total))
            if not data:
                return
            total += len(data)
            if total > limit:  # grew while being read
                raise error(f"{Path(path)}: more than tokviz reads from such a file ({limit:,} bytes)")
            yield data
    except OSError as exc:
        raise error(f"{Path(path)}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_head(path: str | os.PathLike, n: int, error: type[TokvizError] = TokvizError) -> bytes:
    """The first `n` bytes of the ordinary file at `path` (to recognise its format)."""
    fd = open_regular(path, error)
    try:
        return os.read(fd, n)
    except OSError as exc:
        raise error(f"{Path(path)}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class JsonWording:
    """How `parse_json` words its one-line errors. Each is a format string over ``name``, ``what``
    and, where known, ``offset`` (a bad byte), ``line``, ``column``, ``msg``, ``detail`` (the
    parser's words) and ``limit`` (the most digits Python reads in one integer)."""

    not_utf8: str = "{name}: not UTF-8 {what} (bad byte at offset {offset})"
    invalid: str = "{name}: not valid {what} ({detail})"
    too_deep: str = "{name}: {what} nested too deeply to be a tokviz or tokenizer file"
    too_long: str = ("{name}: not valid {what} (a number of more than {limit:,} digits; no tokenizer or tokviz "
                     "file holds one)")


def parse_json(data: bytes | str, name: str, error: type[TokvizError] = TokvizError, *, what: str = "JSON",
               wording: JsonWording = JsonWording()) -> object:
    """The JSON value in `data` (UTF-8 bytes, a BOM allowed, or text): the one place tokviz parses
    JSON it did not write itself. Anything else is `error` naming `name` in one line (`wording`),
    including documents nested too deeply for the parser and integers longer than Python converts
    (``sys.get_int_max_str_digits``, 4,300 digits by default), never a traceback.

        >>> parse_json(b'{"a": [1, 2]}', "x.json")
        {'a': [1, 2]}
        >>> try:
        ...     parse_json("[" + "9" * 5000 + "]", "x.json")
        ... except TokvizError as exc:
        ...     print(exc)
        x.json: not valid JSON (a number of more than 4,300 digits; no tokenizer or tokviz file holds one)
    """
    import json

    words = {"name": name, "what": what}
    try:
        return json.loads(data.decode("utf-8-sig") if isinstance(data, (bytes, bytearray)) else data)
    except UnicodeDecodeError as exc:
        raise error(wording.not_utf8.format(offset=exc.start, **words)) from None
    except json.JSONDecodeError as exc:
        raise error(wording.invalid.format(detail=exc, line=exc.lineno, column=exc.colno, msg=exc.msg,
                                           **words)) from None
    except ValueError:  # the int() of a number longer than the interpreter's digit limit
        limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
        raise error(wording.too_long.format(limit=limit, **words)) from None
    except RecursionError:
        raise error(wording.too_deep.format(**words)) from None


# -- writing ------------------------------------------------------------------------------------

TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")  # what `write_atomic` leaves while writing
STALE_SECONDS = 3600.0


def write_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write bytes (or pieces of bytes, written as they come) to `path` through a temporary file
    in the same folder and a rename: a reader sees the old file or the new one, never half of
    one; the temporary file is removed whatever stops the write (a full disk, Ctrl+C, an error
    making the pieces)."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise TokvizError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        if hasattr(os, "fchmod"):  # mkstemp makes 0600; a saved file gets the usual mode
            os.fchmod(fd, _new_file_mode(path))
        with os.fdopen(fd, "wb") as f:
            for piece in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
                f.write(piece)
            f.flush()
            os.fsync(f.fileno())  # the bytes are on disk before the rename makes them the file
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise TokvizError(f"{path}: cannot write ({exc.strerror or exc})") from None
        raise


def _new_file_mode(path: Path) -> int:
    """The mode of the file being replaced, else 0666 minus the umask (what ``open`` would give)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, racing other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether `a` and `b` name one file (through symbolic or hard links too); a path that does
    not exist yet is compared by its resolved name."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """`write_atomic` for UTF-8 text (exports: CSV, HTML, JSON)."""
    write_atomic(Path(path), text.encode("utf-8"))


def remove_stale_temp_files(folder: str | os.PathLike, *, older_than: float = STALE_SECONDS) -> list[Path]:
    """Delete the temporary files interrupted writes left in `folder` (a crash, a kill -9) that
    are older than `older_than` seconds; returns what was removed. Only `write_atomic`'s own
    names (``.NAME.xxxxxxxx.tmp``) are touched."""
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        try:
            if TEMP_NAME.match(e.name) and e.is_file(follow_symlinks=False) \
                    and now - e.stat(follow_symlinks=False).st_mtime > older_than:
                os.unlink(e.path)
                removed.append(Path(e.path))
        except OSError:
            continue
    return removed
