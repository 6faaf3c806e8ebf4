"""Each job column's place in a job row, so Python reads a row by name: ``row[jobrow.STATUS]``.

Every statement that selects or returns a whole job lists ``Tables.columns``, i.e.
``JOB_COLUMNS`` in order; these constants are those places. They are checked against
``JOB_COLUMNS`` when this module is imported, so a column added, dropped or moved there
fails at import instead of reading the wrong value.

Plain int constants, not an IntEnum or ``sqlite3.Row``: a row is read on the drain's path
(tens of thousands of jobs/s), and on Python 3.11 ``row[SomeIntEnum.X]`` costs several times
``row[17]`` while a module constant costs a few ns more. The one mapping that runs for every
job (``queries.claimed_row_to_job``) unpacks the row into names instead (a test holds its
names to ``JOB_COLUMNS``).
"""

from __future__ import annotations

from .schema import JOB_COLUMNS

(
    ID, NAME, DATA, STATUS, NEXT_RUN_AT, LOCKED_AT, CLAIMED_BY, LAST_HEARTBEAT,
    HEARTBEAT_INTERVAL, FAIL_COUNT, FAIL_REASON, REPEAT_INTERVAL, UNIQUE_KEY,
    CREATED_AT, UPDATED_AT, ATTEMPTS, ERROR_TYPE, ERROR_GROUP, TIMEOUT_MS, OVER_LIMIT_AT,
    STOP_REQUESTED_AT, PROGRESS, RESULT,
) = range(len(JOB_COLUMNS))  # fmt: skip

_PLACES = {column: globals().get(column.upper()) for column in JOB_COLUMNS}
if tuple(_PLACES.values()) != tuple(range(len(JOB_COLUMNS))):  # pragma: no cover - a wrong edit
    raise ImportError(f"jobrow's places {_PLACES} do not match JOB_COLUMNS: give every column its place, in order")
