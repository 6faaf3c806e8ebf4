"""Turn a current SQLite file back into an older schema version, as the migration tests need.

Each version's added job columns are listed once here, so a new schema version is one line
in ``ADDED_JOB_COLUMNS`` rather than an edit in every test that builds an old file.
"""

from __future__ import annotations

import sqlite3

#: The job-table columns each schema version added (tables it added are the tests' own).
ADDED_JOB_COLUMNS: dict[int, tuple[str, ...]] = {
    5: ("change_seq",),
    7: ("timeout_ms", "over_limit_at"),
    8: ("stop_requested_at", "progress", "result"),
}


#: The instance-registry columns each schema version added (the registry came in version 3).
ADDED_INSTANCE_COLUMNS: dict[int, tuple[str, ...]] = {
    9: ("supervisor",),
}


def set_back_job_columns(conn: sqlite3.Connection, version: int, table: str = "monque_jobs") -> None:
    """Drop every job (and registry) column added after ``version`` and stamp the file as that version."""
    for added_in, columns in ADDED_JOB_COLUMNS.items():
        if added_in > version:
            for column in columns:
                conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    registry = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (f"{table}_instances",)).fetchone()
    for added_in, columns in ADDED_INSTANCE_COLUMNS.items():
        if added_in > version and registry is not None:
            for column in columns:
                conn.execute(f"ALTER TABLE {table}_instances DROP COLUMN {column}")
    conn.execute(f"UPDATE {table}_meta SET value = ? WHERE key = 'schema_version'", (version,))
