"""Refuse an export path that leads to a store's own files, however the path is spelled.

An export replaces an existing file whole (an earlier export, by design). The guard used to
compare the name given (``--output jobs.db-wal``) and so missed the same file reached another
way: through a symlink, ``--output out.jsonl`` replaced the store's ``jobs.db-wal``, and
acknowledged jobs were gone at the next open (issue 25). So the check is on files, not names:

* the path is resolved first (every symlink, in the folder part too, a dangling one
  included), and the file it leads to is compared, as (folder's device and inode, name), with
  the store's database and its ``-wal``, ``-shm`` and ``-journal`` files, whether those exist
  yet or not (SQLite makes them beside the database, and beside the file a symlinked database
  path leads to), so a folder reached through a symlink or a bind mount is caught too;
* a file that exists is compared by device and inode, so a hard link to one is caught;
* any SQLite database, and a companion file of one, is refused whatever store it belongs to.

The one file writer (``export_file.write_export``, behind ``monque-tui export --output`` and the
console's export) asks ``export_refusal`` before it writes and ``refusal_in_folder`` at the rename.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

#: The files a SQLite store lives in: the database, and what SQLite keeps beside it.
STORE_FILE_ROLES: dict[str, str] = {
    "": "database",
    "-wal": "write-ahead log",
    "-shm": "shared-memory index",
    "-journal": "rollback journal",
}
SQLITE_HEADER = b"SQLite format 3\x00"
#: The first bytes of a SQLite write-ahead log (either byte order of its checksums) and of a
#: hot rollback journal: such a file is refused under any name (a hard link to another
#: database's ``-wal``).
_COMPANION_MAGIC: dict[bytes, str] = {
    b"\x37\x7f\x06\x82": "a SQLite write-ahead log",
    b"\x37\x7f\x06\x83": "a SQLite write-ahead log",
    b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7": "a SQLite rollback journal",
}


@dataclass(frozen=True, slots=True)
class StoreFile:
    """One file a store lives in (it may not exist yet): its absolute path and what it is."""

    path: str
    role: str


def store_files(store_url: str | None) -> tuple[StoreFile, ...]:
    """The files of the SQLite store ``store_url`` names, existing or not; none for another store.

    Both spellings of each: beside the path as given and beside the file it resolves to, since
    SQLite puts ``-wal`` and ``-shm`` beside the database's real path.
    """
    if not store_url or not store_url.lower().startswith("sqlite://"):
        return ()
    from .store import InvalidStoreUrlError
    from .store.sqlite.url import parse_sqlite_url

    try:
        path = parse_sqlite_url(store_url).path
    except InvalidStoreUrlError:
        return ()  # the store cannot open it either, and says why
    given = os.path.abspath(path)
    bases = dict.fromkeys((given, os.path.realpath(given)))
    return tuple(StoreFile(base + suffix, role) for base in bases for suffix, role in STORE_FILE_ROLES.items())


def export_refusal(target: str, store_url: str | None) -> str | None:
    """Why an export must not be written to ``target``, in a few words, or None if it may.

    ``target`` is the path as the user gave it (``~`` already expanded). Reasons read
    "it leads to the store's write-ahead log /data/jobs.db-wal through a symlink",
    "it is a hard link to the store's database /data/jobs.db", "it is a SQLite database".
    """
    given = os.path.abspath(target)
    resolved = os.path.realpath(given)
    folder, name = os.path.split(resolved)
    found = _store_file(_stat(folder), name, _stat(resolved), store_files(store_url))
    if found is not None:
        store_file, by_name = found
        what = f"the store's {store_file.role} {store_file.path}"
        if not by_name:
            return f"it is a hard link to {what}"
        return f"it is {what}" if resolved == given else f"it leads to {what} through a symlink"
    return _sqlite_file(resolved)


def refusal_in_folder(folder_fd: int, name: str, store_url: str | None) -> str | None:
    """``export_refusal`` for ``name`` in the open folder ``folder_fd``: what a rename there replaces.

    An export renames its finished file into place through a folder it holds open, so a
    symlink swapped into the path after ``export_refusal`` was asked cannot redirect it; this
    asks again about exactly the folder and name the rename will use.
    """
    try:
        existing: os.stat_result | None = os.stat(name, dir_fd=folder_fd)
    except OSError:
        existing = None
    found = _store_file(os.fstat(folder_fd), name, existing, store_files(store_url))
    if found is None:
        return None
    store_file, by_name = found
    return f"it is {'' if by_name else 'a hard link to '}the store's {store_file.role} {store_file.path}"


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _same(first: os.stat_result, second: os.stat_result) -> bool:
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _store_file(
    folder: os.stat_result | None, name: str, existing: os.stat_result | None, files: tuple[StoreFile, ...]
) -> tuple[StoreFile, bool] | None:
    """The store file that ``name`` in ``folder`` is (True: that very name; False: a hard link)."""
    for store_file in files:
        store_folder, store_name = os.path.split(store_file.path)
        if folder is not None and name == store_name:
            seen = _stat(store_folder)
            if seen is not None and _same(seen, folder):
                return store_file, True
    if existing is not None:
        for store_file in files:
            seen = _stat(store_file.path)
            if seen is not None and _same(seen, existing):
                return store_file, False
    return None


def _sqlite_file(path: str) -> str | None:
    """Why ``path`` (resolved) is some SQLite database's file, whichever store it belongs to."""
    kind = _sqlite_kind(path)
    if kind is not None:
        return f"it is {kind}"
    for suffix in STORE_FILE_ROLES:
        if suffix and path.endswith(suffix) and _sqlite_kind(path.removesuffix(suffix)) == "a SQLite database":
            return f"it belongs to the SQLite database {os.path.basename(path.removesuffix(suffix))}"
    return None


def _sqlite_kind(path: str) -> str | None:
    """ "a SQLite database" (or write-ahead log, or rollback journal) when its first bytes say so."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or device to look (a FIFO blocks)
            return None
        with open(path, "rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except (OSError, ValueError):
        return None
    if head == SQLITE_HEADER:
        return "a SQLite database"
    return next((kind for magic, kind in _COMPANION_MAGIC.items() if head.startswith(magic)), None)


__all__ = ["STORE_FILE_ROLES", "StoreFile", "export_refusal", "refusal_in_folder", "store_files"]
