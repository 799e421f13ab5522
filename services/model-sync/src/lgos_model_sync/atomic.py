"""Replacing a file so readers see the old bytes or the new, never a mix.

The text goes to a temporary file in the same directory (a rename is atomic
only within one file system), is flushed to disk, and is renamed over the
target; the directory is synced so the rename itself survives a crash. Any
failure removes the temporary file and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

_NEW_FILE_MODE = 0o644


def read_text(path: Path) -> str | None:
    """The file's text, or ``None`` when it does not exist yet."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8")


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` (following symlinks) with ``text`` atomically."""
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    fd, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
    )
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(text.encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_directory(target.parent)


def _sync_directory(directory: Path) -> None:
    # Best effort: some file systems refuse to open or sync a directory.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
