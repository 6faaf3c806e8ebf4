"""Read-only descriptors of a store's files that this process never closes while they are live.

Closing *any* descriptor of a file drops every POSIX lock this process holds on it, the
locks of SQLite's own connections included: SQLite defers closing its own descriptors for
that reason, but it cannot know about ours. The header check (identity.py) reads the
database file and the WAL gauge (checkpointer.py) reads the ``-shm`` file through
descriptors of their own; closed at a store's close while another connection of the process
still used the file (a second store on it, the console's export, a script's probe), they
left that connection unlocked, so another process's last connection checkpointed and deleted
the WAL under it and reads failed with "database disk image is malformed".

So a descriptor is kept per file (device, inode) for as long as that file is still the one
at its path. One whose path is gone or names another file now is closed when the next one
is opened: nobody can open that file by its path any more, so no lock of it matters to
another process. The cost is one descriptor per live store file per process.
"""

from __future__ import annotations

import os
import threading

#: (device, inode) -> (path, descriptor); several descriptors of one file only after a race.
_HELD: dict[tuple[int, int], list[tuple[str, int]]] = {}
_LOCK = threading.Lock()


def held_fd(path: str) -> int:
    """A read-only descriptor of the file at ``path``, shared and kept open (see above)."""
    with _LOCK:
        _close_unreachable()
        stat = os.stat(path)
        held = _HELD.get((stat.st_dev, stat.st_ino))
        if held:
            _, fd = held[0]
            return fd
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        opened = os.fstat(fd)  # the file we did open (the path may have changed meanwhile)
        _HELD.setdefault((opened.st_dev, opened.st_ino), []).append((path, fd))
        return fd


def close_unreachable() -> None:
    """Close the descriptors of files no longer at their path (call after a store closed):
    SQLite deletes ``-shm`` when its last connection closes, and an open descriptor of a
    deleted file keeps it alive (a file system with one cannot be remounted read-only)."""
    with _LOCK:
        _close_unreachable()


def close_if_unused(db_path: str) -> None:
    """Close the database file's descriptor once no connection anywhere has it open: SQLite
    deletes ``-shm`` only when the last connection of every process closes (it takes the
    exclusive lock first), so with ``-shm`` gone no lock of the file is held to drop. Keeps a
    process that opens many stores in turn (a test suite, a script) from piling descriptors up."""
    if os.path.exists(db_path + "-shm"):
        return
    with _LOCK:
        for key, held in list(_HELD.items()):
            first_path, _ = held[0]
            if first_path == db_path:
                for _, fd in held:
                    os.close(fd)
                del _HELD[key]


def _close_unreachable() -> None:
    for key, held in list(_HELD.items()):
        path, _ = held[0]
        try:
            stat = os.stat(path)
            live = (stat.st_dev, stat.st_ino) == key
        except OSError:
            live = False
        if not live:
            for _, fd in held:
                os.close(fd)
            del _HELD[key]
