"""What a local path is, when a store or an export must not treat it as a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def special_file_kind(path: Path) -> str | None:
    """What ``path`` is when it exists but is not a regular file (symlinks followed), else None.

    SQLite opens a device or FIFO as if it were a database: ``sqlite:////dev/null`` failed with
    a misleading "disk I/O error" after leaving ``/dev/null-journal`` behind, and a FIFO hung
    the open for ever waiting for a writer (probe finding).
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing (created later) or unreadable: the other checks say which
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"
