"""The files autosave keeps in the data folder: the session (``autosave.tokviz``) and the
``clean-exit`` marker. The folder may be read-only, missing or not a folder at all (a locked-down
home, a full disk): writing says why in one line (`TokvizError`), for the status bar, and looking
for the files never raises. What this leaves out: when to save and what (`session_ops`).
"""

from __future__ import annotations

from pathlib import Path

from tokviz.core import TokvizError
from tokviz.core.saved.session import Session, save_session

AUTOSAVE_NAME = "autosave.tokviz"
CLEAN_EXIT_NAME = "clean-exit"


def write_autosave(session: Session, path: Path, *, should_stop=None, progress=None) -> str:
    """Save `session` to `path` (a `TaskEngine` job), creating its folder; `TokvizError` naming the
    folder if it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise TokvizError(f"{path.parent}: cannot write (not a folder)") from None
    except OSError as exc:
        raise TokvizError(f"{path.parent}: cannot write ({exc.strerror or exc})") from None
    save_session(session, path)
    return str(path)


def write_marker(path: Path) -> bool:
    """Leave the clean-exit marker; False where the folder cannot be written (no recovery offer is
    lost: without an autosave there is nothing to offer)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("clean exit\n", encoding="utf-8")
    except OSError:
        return False
    return True


def path_exists(path: Path) -> bool:
    """`path` exists; False where its folder cannot even be looked into."""
    try:
        return path.exists()
    except OSError:
        return False
