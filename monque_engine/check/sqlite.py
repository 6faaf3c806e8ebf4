"""``monque-tui check`` on a SQLite URL: the little worth checking without opening the store.

The checks that make ``check`` worth running (topology, change streams, transactions, clock
skew, oplog, owners a Node fleet leaves) are about a MongoDB cluster; one SQLite file has
none of them, and the store checks its schema and turns on WAL itself when it opens the
file. So this reads only the file's header (never a lock, never a connection that could
wait on a writer) and says where the rest is: a full ``PRAGMA quick_check`` reads the whole
file, which on a large store is minutes of I/O beside running workers, so it is named, not run.
"""

from __future__ import annotations

import os
import struct

from ..store import locate_store
from .lines import CheckLine, Verdict

#: The SQLite header: the magic string, then at offset 18 and 19 the read and write format
#: versions, 2 in a write-ahead-logged database (https://www.sqlite.org/fileformat.html).
MAGIC = b"SQLite format 3\x00"
WAL_FORMAT = 2
#: The header's first 100 bytes hold the page size (offset 16) and the database size in pages
#: (offset 28), valid when the change counter (24) equals the version-valid-for number (92).
HEADER_BYTES = 100


def header_size(header: bytes) -> int | None:
    """The file size the header promises (pages x page size), or None where it does not say."""
    if len(header) < HEADER_BYTES or header[24:28] != header[92:96]:
        return None
    (page_size,) = struct.unpack(">H", header[16:18])
    (pages,) = struct.unpack(">I", header[28:32])
    page_size = 65_536 if page_size == 1 else page_size
    return pages * page_size if pages else None


def _unreadable(path: str, size: int, header: bytes) -> CheckLine:
    """The file's tables could not be listed: a file shorter than its header says is damaged
    (``check`` said "ok ... Monque collections: none readable" of a truncated copy, exit 0,
    while every other command refused it); otherwise a writer may hold a lock."""
    promised = header_size(header)
    if promised is not None and size < promised:
        return CheckLine(
            Verdict.FAIL,
            "file",
            f"{path} is {size:,} bytes but its header says {promised:,}: truncated or damaged",
            "restore it from a backup (a partial copy? copy it again, with the -wal file, while no worker writes)",
        )
    return CheckLine(
        Verdict.WARN,
        "file",
        f"{path}: {size:,} bytes; its tables cannot be read (damaged, or locked by a writer)",
        f"run sqlite3 {path} 'PRAGMA quick_check'; restore a backup if it reports errors",
    )


def _schema_line(path: str, collection: str) -> CheckLine:
    """The collection's schema version against this code's: a store written by a newer Monque
    passed ``check`` ("3 ok") while every worker of this version refused to open it (probe-cli)."""
    from ..store.sqlite.location import schema_version
    from ..store.sqlite.schema import SCHEMA_VERSION

    version = schema_version(path, collection)
    if version is None:
        return CheckLine(Verdict.WARN, "schema", f"{collection}: its schema version cannot be read", "")
    if version > SCHEMA_VERSION:
        return CheckLine(
            Verdict.FAIL,
            "schema",
            f"{collection}: schema version {version}, newer than the {SCHEMA_VERSION} this monque_engine knows: "
            "workers of this version refuse to open it",
            "deploy a monque_engine at least as new as the one that wrote it (pip install -U monque-tui)",
        )
    if version < SCHEMA_VERSION:
        return CheckLine(
            Verdict.OK,
            "schema",
            f"{collection}: schema version {version}; the first worker of this version upgrades it to "
            f"{SCHEMA_VERSION} (one way: older workers then refuse it)",
        )
    return CheckLine(Verdict.OK, "schema", f"{collection}: schema version {version}, this monque_engine's")


def check_sqlite(url: str, collection: str) -> list[CheckLine]:
    location = locate_store(url)
    path = location.path or ""
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        header = handle.read(HEADER_BYTES)
    lines: list[CheckLine] = []
    if not header:
        lines.append(CheckLine(Verdict.OK, "file", f"{path} is empty: the first worker makes its tables"))
    elif not header.startswith(MAGIC):
        lines.append(CheckLine(Verdict.FAIL, "file", f"{path} is not a SQLite database", "point the URL at the store"))
        return lines
    else:
        if location.collections is None:
            lines.append(_unreadable(path, size, header))
            if lines[-1].verdict is Verdict.FAIL:
                return lines
        else:
            held = ", ".join(location.collections) or "none"
            lines.append(CheckLine(Verdict.OK, "file", f"{path}: {size:,} bytes; Monque collections: {held}"))
            if collection in location.collections:
                lines.append(_schema_line(path, collection))
        if header[18] == WAL_FORMAT and header[19] == WAL_FORMAT:
            lines.append(CheckLine(Verdict.OK, "journal", "write-ahead log (WAL)"))
        else:
            lines.append(
                CheckLine(
                    Verdict.OK,
                    "journal",
                    "rollback journal: the store turns WAL on when it next opens the file for writing",
                )
            )
    lines.append(
        CheckLine(
            Verdict.OK,
            "scope",
            f"the cluster checks (topology, change streams, transactions, clock, oplog, unregistered owners) are "
            f"for MongoDB; for this file's integrity run sqlite3 {path} 'PRAGMA quick_check' (it reads the whole "
            "file)",
        )
    )
    return lines
