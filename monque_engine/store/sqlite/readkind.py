"""The kinds of read, each with its fixed treatment of the inbox (ADR 0014).

A job whose ``enqueue`` returned may still be an inbox row (inbox.py). What a read must do
about that follows from what it reads, so the read says what it is and the store's one read
path (``SqliteStore._read``) does the rest; no caller chooses flags:

- ``Jobs``: reads job rows, any of which may be queued (a point read, a listing, a page):
  over the inbox view (the job table plus the inbox rows as pending jobs) when the inbox
  holds rows, in the read's own snapshot.
- ``Tally``: an aggregate over jobs that may be queued (a count, a health row, the earliest
  due time): SQLite never flattens the view into an aggregate, so it runs on the job table
  and again on the inbox rows alone, and ``combine(stored, queued)`` adds the answers.
- ``Settled``: reads nothing an inbox row can be: jobs claimed, processing or failed, jobs
  under a change position (an inbox row has none until it moves), or other tables (the kept
  counts, error counts, the registry, meta). It skips the inbox look.

The kind is chosen where the statement is written (reads.py, fleet.py, scan.py,
management.py), next to the SQL that decides it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, NamedTuple, Protocol, TypeVar, Union

from .runner import Operation

T = TypeVar("T")


class Jobs(NamedTuple, Generic[T]):
    """Job rows, any of which may be queued: read over the inbox view when it holds rows."""

    op: Operation[T]


class Tally(NamedTuple, Generic[T]):
    """An aggregate over jobs that may be queued: the job table's answer ``combine``d with
    the inbox rows' answer (one snapshot)."""

    op: Operation[T]
    combine: Callable[[T, T], T]


class Settled(NamedTuple, Generic[T]):
    """Nothing an inbox row can be (see the module docstring): no inbox look."""

    op: Operation[T]


Read = Union[Jobs[T], Tally[T], Settled[T]]  # noqa: UP007 - a generic alias needs Union here


class Reads(Protocol):
    """The store's read path, as the modules that build reads call it."""

    def __call__(self, read: Read[T]) -> Awaitable[T]: ...
