"""What crosses the store boundary besides jobs: selectors, filters, step counts, open
options, a URL's location. Plain values, shared by the ports (ports.py), the composite
(base.py) and both backends; this module imports neither."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..errors import MonqueError
from ..job import Job, JobStatus
from ..payload_filter import DataTerm


class PendingSplit(NamedTuple):
    """``JobStore.pending_split``'s answer for one job name. ``due`` and ``scheduled`` are
    counted up to the cap given, so a value at (or above) the cap means "at least that many"."""

    name: str
    due: int
    scheduled: int
    earliest_ms: int | None
    latest_ms: int | None


class StoreSelector(NamedTuple):
    """A bulk selector after the scheduler applied its guard: ``statuses`` is final."""

    name: str | None = None
    statuses: tuple[JobStatus, ...] | None = None  # None: any status
    created_before_ms: int | None = None
    created_after_ms: int | None = None
    updated_before_ms: int | None = None
    #: Bulk on any listing filter: every job must also match this listing filter (its
    #: ``statuses`` already intersected with the guard above and left None by the scheduler).
    listing: StoreListFilter | None = None
    #: Ours: only the failed and retrying jobs of this error group (see ``group_member_*``).
    error_group: str | None = None
    #: Ours: payload / error text contains this, ASCII case ignored (ADR 0008).
    text: str | None = None
    #: Ours: the position a bulk count was taken at (``count_selected_as_of``): only jobs
    #: whose last write that count saw. Each store's own token; meaningless across stores.
    as_of: int | None = None


class StoreListFilter(NamedTuple):
    """A listing filter after validation: instants in ms, bounds inclusive."""

    name: str | None = None
    statuses: tuple[JobStatus, ...] | None = None
    created_from_ms: int | None = None
    created_to_ms: int | None = None
    updated_from_ms: int | None = None
    updated_to_ms: int | None = None
    next_run_from_ms: int | None = None
    next_run_to_ms: int | None = None
    search: str | None = None  # id prefix or unique-key substring
    recurring: bool | None = None  # with (True) or without (False) a repeatInterval
    text: str | None = None  # payload / error text contains this, ASCII case ignored (ADR 0008)
    error_group: str | None = None  # only failed and retrying members of this error group
    name_pattern: str | None = None  # the name matches this glob (* and ?), see JobListFilter
    data: tuple[DataTerm, ...] | None = None  # payload conditions, all must hold (payload_filter.py)


class StepCount(NamedTuple):
    """Where a count in steps (``JobStore.count_in_steps``) stands: the matches so far by
    status, the jobs read so far, about how many there are to read, whether it is done, and
    (for a selector) the store's position the count is bounded by (``count_selected_as_of``)."""

    by_status: dict[JobStatus, int]
    read: int
    total: int
    done: bool
    position: int | None = None

    @property
    def matched(self) -> int:
        return sum(self.by_status.values())


class StepPage(NamedTuple):
    """Where a page in steps (``JobStore.page_in_steps``) stands: the rows found so far in
    traversal order, the jobs read so far, about how many there are to read, and whether it
    is done (the page is full or nothing is left to read)."""

    rows: list[Job]
    read: int
    total: int
    done: bool


class StoreOpenOptions(NamedTuple):
    """How ``Monque`` opens its store: the collection, its indexes, and whom to tell when it is lost."""

    collection_name: str = "monque_jobs"
    create_indexes: bool = True
    retention_index: bool = False
    #: Called on the store's event loop, once, when the store finds it can no longer be
    #: trusted (e.g. its SQLite file was deleted or replaced); ``Monque`` emits job:error.
    on_fatal: Callable[[Exception], None] | None = None


class StoreLocation(NamedTuple):
    """Where a store URL points, found without opening the store (``locate_store``).

    Looking never creates, locks for writing or changes anything: a command that only reads
    asks this first, so a mistyped path or collection is refused instead of made. A field
    is None where the store cannot tell without connecting (a MongoDB server makes its
    databases and collections on first write, so it says nothing about either).
    """

    #: Short kind name, as ``JobStore.kind`` ("sqlite", "mongodb").
    kind: str
    #: The file a SQLite URL names (``~`` expanded; relative to the working directory), or None.
    path: str | None = None
    #: The URL opens the store read-only (SQLite ``mode=ro``).
    read_only: bool = False
    #: Something exists at ``path``; None where there is no path to look at.
    exists: bool | None = None
    #: The Monque collections the file holds, sorted; None when that cannot be read (no
    #: file, not a database, locked) or is not known without connecting (a server).
    collections: tuple[str, ...] | None = None


class InvalidCollectionNameError(MonqueError, ValueError):
    """A collection name the store a URL names cannot hold."""
