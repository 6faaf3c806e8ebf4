"""Bounds both backends keep, written once above them (issue 35, design item 2).

Only a bound that means the same thing on both sides belongs here. The others are each
backend's own and stay beside the code they bound: SQLite's ``BULK_CHUNK`` (jobs per write
transaction of a bulk action or a purge, sized to how long the file's write lock is held)
has no MongoDB counterpart (a bulk action is one ``updateMany``), and is not the retention
service's ``PURGE_BATCH`` (the batch it asks a store without its own chunking for); the
``as_of`` bound is a commit-order position on SQLite and a time on MongoDB (ADR 0015), so
only its check (``scheduler/manager.py``) is shared.
"""

from __future__ import annotations

from typing import Final

#: How many unreadable job ids a store remembers so it warns about each only once (then it
#: forgets them all and starts again, so a file or collection of bad rows cannot grow it).
WARNED_IDS_LIMIT: Final = 10_000
