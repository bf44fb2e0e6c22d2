"""`AppSettings`: the one place that knows every persistent setting key (QSettings).

Window geometry and dock layout (saved with a layout version; a different version is ignored, so a
changed dock set never restores a broken layout), the workspace on screen and each workspace's own
dock state, whether the first-run screen was used, the last training settings, recent files, the
last folder, theme and font scale. Values are checked on the way out: a corrupt or foreign value
gives the default, never an exception.

Tests and the screenshot command never touch the user's settings: they pass their own `QSettings`
(an INI file in a temporary folder), or set ``TOKVIZ_SETTINGS_FILE``.

What this leaves out: applying the values (the main window and theme modules do that).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from tokviz.core import TokvizError
from tokviz.core.registry import AnySettings, settings_from_json, settings_to_json
from tokviz.core.io.safe_files import parse_json

ORGANIZATION = "tokviz"
APPLICATION = "tokviz"
SETTINGS_FILE_ENV = "TOKVIZ_SETTINGS_FILE"
LAYOUT_VERSION = 5  # bump when docks are added, removed or renamed
MAX_RECENT = 10
THEMES = ("system", "light", "dark")
FONT_SCALE_MIN, FONT_SCALE_MAX = 0.6, 3.0

KEY_GEOMETRY = "window/geometry"
KEY_STATE = "window/state"
KEY_LAYOUT_VERSION = "window/layout_version"
KEY_WORKSPACE = "window/workspace"  # the workspace on screen
KEY_WORKSPACE_STATE = "workspaces/{}/state"  # each workspace's own dock arrangement
KEY_WORKSPACE_VERSION = "workspaces/{}/layout_version"
KEY_WELCOME_DONE = "welcome/done"  # the first-run screen was used or dismissed
KEY_TRAINING = "training/settings"
KEY_RECENT = "files/recent"
KEY_LAST_DIR = "files/last_dir"
KEY_THEME = "appearance/theme"
KEY_FONT_SCALE = "appearance/font_scale"
KEY_PRESENTER_SCALE = "presenter/font_scale"  # classroom
KEY_AUTOSAVE_SECONDS = "session/autosave_seconds"
PRESENTER_SCALE_MIN, PRESENTER_SCALE_MAX, PRESENTER_SCALE_DEFAULT = 1.5, 3.0, 2.0
AUTOSAVE_DEFAULT_SECONDS = 60


class AppSettings:
    """Typed access to the application's QSettings."""

    def __init__(self, qsettings: QSettings | None = None, *, data_dir: str | os.PathLike | None = None) -> None:
        self.qsettings = qsettings if qsettings is not None else QSettings(ORGANIZATION, APPLICATION)
        self._data_dir = Path(data_dir) if data_dir is not None else None

    @classmethod
    def open(cls, path: str | os.PathLike | None = None) -> "AppSettings":
        """Settings from `path` (INI), else from ``$TOKVIZ_SETTINGS_FILE``, else the user's."""
        path = path if path is not None else os.environ.get(SETTINGS_FILE_ENV)
        if path:  # an explicit settings file keeps its app data (autosave) beside it
            return cls(QSettings(str(path), QSettings.Format.IniFormat), data_dir=Path(path).parent / "data")
        return cls()

    @classmethod
    def in_folder(cls, folder: str | os.PathLike) -> "AppSettings":
        return cls.open(Path(folder) / "tokviz-settings.ini")

    def sync(self) -> None:
        self.qsettings.sync()

    def _str(self, key: str, default: str = "") -> str:
        value = self.qsettings.value(key, default)
        return value if isinstance(value, str) else default

    def _json(self, key: str):
        try:  # a value edited by hand may be anything: unreadable means unset
            return parse_json(self._str(key, "null"), key)
        except TokvizError:
            return None

    def _bytes(self, key: str) -> QByteArray | None:
        value = self.qsettings.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    # -- window layout ----------------------------------------------------------------------

    def window_layout(self) -> tuple[QByteArray | None, QByteArray | None]:
        """(geometry, dock state) saved by this layout version, else (None, None)."""
        if self._str(KEY_LAYOUT_VERSION) != str(LAYOUT_VERSION):
            return None, None
        return self._bytes(KEY_GEOMETRY), self._bytes(KEY_STATE)

    def save_window_layout(self, geometry: QByteArray, state: QByteArray) -> None:
        self.qsettings.setValue(KEY_GEOMETRY, geometry)
        self.qsettings.setValue(KEY_STATE, state)
        self.qsettings.setValue(KEY_LAYOUT_VERSION, str(LAYOUT_VERSION))

    def workspace(self, default: str) -> str:
        """The key of the workspace last on screen (`default` when none was saved)."""
        return self._str(KEY_WORKSPACE, default) or default

    def set_workspace(self, key: str) -> None:
        self.qsettings.setValue(KEY_WORKSPACE, key)

    def workspace_state(self, key: str) -> QByteArray | None:
        """The dock state saved for workspace `key` by this layout version, else None."""
        if self._str(KEY_WORKSPACE_VERSION.format(key)) != str(LAYOUT_VERSION):
            return None
        return self._bytes(KEY_WORKSPACE_STATE.format(key))

    def save_workspace_state(self, key: str, state: QByteArray | None) -> None:
        """Keep `state` for workspace `key` (None forgets it: the workspace's default layout)."""
        if state is None:
            self.qsettings.remove(KEY_WORKSPACE_STATE.format(key))
            self.qsettings.remove(KEY_WORKSPACE_VERSION.format(key))
            return
        self.qsettings.setValue(KEY_WORKSPACE_STATE.format(key), state)
        self.qsettings.setValue(KEY_WORKSPACE_VERSION.format(key), str(LAYOUT_VERSION))

    def welcome_done(self) -> bool:
        """Whether the first-run screen was used or dismissed (it then stays away)."""
        return self._str(KEY_WELCOME_DONE) == "1"

    def set_welcome_done(self, done: bool = True) -> None:
        self.qsettings.setValue(KEY_WELCOME_DONE, "1" if done else "0")

    # -- training ---------------------------------------------------------------------------

    def train_settings(self) -> AnySettings | None:
        """The last training settings (BPE, WordPiece or Unigram), or None if there are none or
        they no longer validate."""
        d = self._json(KEY_TRAINING)
        if not isinstance(d, dict):
            return None
        try:
            return settings_from_json(d)
        except (TokvizError, TypeError, ValueError):
            return None

    def save_train_settings(self, settings: AnySettings) -> None:
        self.qsettings.setValue(KEY_TRAINING, json.dumps(settings_to_json(settings)))

    # -- files ------------------------------------------------------------------------------

    def recent_files(self) -> list[str]:
        value = self._json(KEY_RECENT)
        if not isinstance(value, list):
            return []
        return [p for p in value if isinstance(p, str) and p][:MAX_RECENT]

    def _set_recent(self, paths: list[str]) -> None:
        self.qsettings.setValue(KEY_RECENT, json.dumps(paths[:MAX_RECENT]))

    def add_recent_file(self, path: str | os.PathLike) -> list[str]:
        """Put `path` first in the recent list; return the new list."""
        p = str(Path(path).resolve())
        paths = [p] + [q for q in self.recent_files() if q != p]
        self._set_recent(paths)
        return paths[:MAX_RECENT]

    def remove_recent_file(self, path: str | os.PathLike) -> list[str]:
        p = str(Path(path).resolve())
        paths = [q for q in self.recent_files() if q != p]
        self._set_recent(paths)
        return paths

    def clear_recent_files(self) -> None:
        self._set_recent([])

    def last_dir(self) -> str:
        d = self._str(KEY_LAST_DIR)
        return d if d and Path(d).is_dir() else str(Path.home())

    def set_last_dir(self, folder: str | os.PathLike) -> None:
        self.qsettings.setValue(KEY_LAST_DIR, str(folder))

    # -- appearance -------------------------------------------------------------------------

    def theme(self) -> str:
        t = self._str(KEY_THEME, "system")
        return t if t in THEMES else "system"

    def set_theme(self, theme: str) -> None:
        if theme not in THEMES:
            raise ValueError(f"unknown theme {theme!r}; choose one of {', '.join(THEMES)}")
        self.qsettings.setValue(KEY_THEME, theme)

    def font_scale(self) -> float:
        try:
            scale = float(self._str(KEY_FONT_SCALE, "1.0"))
        except ValueError:
            return 1.0
        return clamp_font_scale(scale)

    def set_font_scale(self, scale: float) -> None:
        self.qsettings.setValue(KEY_FONT_SCALE, f"{clamp_font_scale(scale):.3f}")

    # -- classroom: presenter mode and sessions ----------------------------------

    def presenter_scale(self) -> float:
        try:
            scale = float(self._str(KEY_PRESENTER_SCALE, str(PRESENTER_SCALE_DEFAULT)))
        except ValueError:
            return PRESENTER_SCALE_DEFAULT
        return clamp_presenter_scale(scale)

    def set_presenter_scale(self, scale: float) -> None:
        self.qsettings.setValue(KEY_PRESENTER_SCALE, f"{clamp_presenter_scale(scale):.2f}")

    def autosave_seconds(self) -> int:
        """Seconds between autosaves (0: off)."""
        try:
            return max(0, int(self._str(KEY_AUTOSAVE_SECONDS, str(AUTOSAVE_DEFAULT_SECONDS))))
        except ValueError:
            return AUTOSAVE_DEFAULT_SECONDS

    def set_autosave_seconds(self, seconds: int) -> None:
        self.qsettings.setValue(KEY_AUTOSAVE_SECONDS, str(max(0, int(seconds))))

    def data_dir(self) -> Path:
        """Where the autosaved session lives: beside an explicit settings file, else the
        platform's app data folder (QStandardPaths AppDataLocation)."""
        if self._data_dir is not None:
            return self._data_dir
        from PySide6.QtCore import QStandardPaths
        return Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation))


def clamp_presenter_scale(scale: float) -> float:
    if scale != scale:  # NaN
        return PRESENTER_SCALE_DEFAULT
    return max(PRESENTER_SCALE_MIN, min(PRESENTER_SCALE_MAX, scale))


def clamp_font_scale(scale: float) -> float:
    if scale != scale:  # NaN
        return 1.0
    return max(FONT_SCALE_MIN, min(FONT_SCALE_MAX, scale))
