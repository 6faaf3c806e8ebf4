"""The store interface: everything the scheduler asks of storage, shaped by the scheduler.

Each store owns its queries (SQL, MongoDB documents); the scheduler owns the semantics
(which transition, which guard, which event). Every method that changes a job applies its
guard atomically and reports what it actually wrote, so "no event for a transition that did
not happen" holds on every store. All instants are epoch milliseconds.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..attempts import Attempt
from ..cursor import CursorAnchor
from ..errorgroups import ErrorGroupRow
from ..errors import MonqueError
from ..job import (
    ChangeEvent,
    CursorDirection,
    InstanceRecord,
    Job,
    JobSort,
    JobStatus,
    NewJob,
    OwnerHolding,
    OwnerRecords,
    PendingHealth,
    QueueStats,
)


@dataclass(frozen=True, slots=True)
class PendingSplit:
    """``JobStore.pending_split``'s answer for one job name. ``due`` and ``scheduled`` are
    counted up to the cap given, so a value at (or above) the cap means "at least that many"."""

    name: str
    due: int
    scheduled: int
    earliest_ms: int | None
    latest_ms: int | None


@dataclass(frozen=True, slots=True)
class StoreSelector:
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


@dataclass(frozen=True, slots=True)
class StoreListFilter:
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


@dataclass(frozen=True, slots=True)
class StepCount:
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


@dataclass(frozen=True, slots=True)
class StepPage:
    """Where a page in steps (``JobStore.page_in_steps``) stands: the rows found so far in
    traversal order, the jobs read so far, about how many there are to read, and whether it
    is done (the page is full or nothing is left to read)."""

    rows: list[Job]
    read: int
    total: int
    done: bool


@dataclass(frozen=True, slots=True)
class StoreOpenOptions:
    collection_name: str = "monque_jobs"
    create_indexes: bool = True
    retention_index: bool = False
    #: Called on the store's event loop, once, when the store finds it can no longer be
    #: trusted (e.g. its SQLite file was deleted or replaced); ``Monque`` emits job:error.
    on_fatal: Callable[[Exception], None] | None = None


@dataclass(frozen=True, slots=True)
class StoreLocation:
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


class JobStore(ABC):
    """One jobs collection. Instances are bound to the event loop that opened them."""

    #: The location with any password masked: safe for titles, logs and errors.
    display_url: str = ""
    #: Short kind name shown to people ("sqlite", "mongodb").
    kind: str = ""
    #: Opened read-only (SQLite ``mode=ro``): every write raises ConnectionError.
    read_only: bool = False
    #: The store builds a completion's attempt record from the row itself (SQLite, in SQL),
    #: so the processor skips building an ``Attempt`` on the hot path (~2.5 µs a job).
    records_success_from_row: bool = False
    #: Where display reads (listings, counts, statistics) go: "primary" unless a console
    #: asked a MongoDB store for a secondary (``MongoStore.set_display_read_preference``).
    display_read_preference: str = "primary"

    def display_staleness_s(self) -> float | None:
        """How far behind the primary display reads may be, in seconds; None when they go to
        the primary (every store but a MongoDB one reading from a secondary)."""
        return None

    # -- before opening: a URL and a collection name, checked without touching the store -------
    @classmethod
    def from_url(cls, url: str, **options: Any) -> JobStore:
        """The store ``url`` names, built but not opened (``open_store`` picks the class)."""
        raise NotImplementedError(f"{cls.__name__} is not opened from a URL")

    @staticmethod
    def check_collection_name(name: str) -> str:
        """``name`` if this store can hold a collection of that name, else raise
        ``InvalidCollectionNameError`` saying what is wrong. Every store needs a name at all;
        a store with stricter rules (a SQLite table name) overrides this."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidCollectionNameError(
                f"Collection name {name!r} is empty; give a collection name (e.g. monque_jobs)"
            )
        return name

    @staticmethod
    def locate(url: str) -> StoreLocation:
        """Where ``url`` points (see ``StoreLocation``), without opening, creating or changing
        anything; raises ``InvalidStoreUrlError`` for a URL this store cannot use. Each store
        overrides it; ``monque_engine.store.locate_store`` picks the store by scheme."""
        raise NotImplementedError("a store locates its own URLs")

    # -- life cycle -------------------------------------------------------------------------
    @abstractmethod
    async def open(self, options: StoreOpenOptions) -> None:
        """Connect and create the collection and indexes; idempotent."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections and threads; idempotent."""

    def health_error(self) -> Exception | None:
        """Why the store can no longer be trusted, or None. Cheap and synchronous: called by
        ``Monque.is_healthy()``. The default store never turns unhealthy on its own."""
        return None

    # -- intake -----------------------------------------------------------------------------
    @abstractmethod
    async def insert(self, job: NewJob) -> Job:
        """Insert a job; with a unique key, return the existing pending/processing job instead."""

    @abstractmethod
    async def insert_many(self, jobs: Sequence[NewJob]) -> list[Job]:
        """Insert all jobs in one transaction (all or none), deduplicating unique keys."""

    async def insert_chunks(self, chunks: Iterable[list[NewJob]]) -> list[Job]:
        """``insert_many`` of the jobs ``chunks`` yields, all or none.

        ``chunks`` builds (validates) the jobs lazily and may raise: then nothing is stored
        and the error propagates. A store may start inserting the first chunks while later
        ones are still being built (SQLite does); this default builds them all first.
        """
        jobs = [job for chunk in chunks for job in chunk]
        return await self.insert_many(jobs) if jobs else []

    async def import_jobs(self, jobs: Sequence[Job]) -> int:
        """Store complete jobs exactly as given, in any status: their ids, instants, owners,
        failures and attempt history. How a demo is seeded, and how an export would be
        restored; not a way to enqueue work (nothing is validated or deduplicated here, the
        caller is ``Monque.import_jobs``). Watchers see each job as an insert, and counts
        include it, as after the store's own writes. An id that is already stored, or a
        unique key a live job holds, makes the import fail; what is then kept depends on
        the store (SQLite: nothing, it is one transaction). Returns how many were stored."""
        raise self._fleet_unsupported("importing jobs")

    # -- processing: claims and owned transitions --------------------------------------------
    @abstractmethod
    async def claim(self, name: str, owner: str, now_ms: int, limit: int, heartbeat_interval_ms: int) -> list[Job]:
        """Atomically take up to ``limit`` due pending jobs of ``name``, earliest nextRunAt first."""

    def complete_queued(self, job_id: str, owner: str, now_ms: int) -> asyncio.Future[Job | None] | None:
        """``complete(job_id, owner, now_ms, None)`` for a store that builds the attempt record
        from the row (``records_success_from_row``), queued without a coroutine: a future of
        what ``complete`` would return, or None when the store has no such path for this job
        (the caller then awaits ``complete``). The processor's hot path: two coroutine layers
        less per job. The default has none."""
        return None

    @abstractmethod
    async def complete(
        self, job_id: str, owner: str, now_ms: int, next_run_at_ms: int | None, attempt: Attempt | None = None
    ) -> Job | None:
        """Owned completion: ``next_run_at_ms`` None marks it completed, else pending again
        (recurring) with failCount 0. None when the job is no longer processing by ``owner``.

        Appends ``attempt`` (outcome ``completed``) to the job's history, keeping the last
        ``MAX_ATTEMPTS``, and clears failReason, errorType and errorGroup, in the same write.
        A store may build the record from the row itself (the claim's ``lockedAt`` and
        ``claimedBy``, ``failCount + 1``), which is what ``attempt`` holds.
        """

    @abstractmethod
    async def fail(
        self,
        job_id: str,
        owner: str,
        now_ms: int,
        fail_count: int,
        reason: str,
        retry_at_ms: int | None,
        attempt: Attempt | None = None,
        error_group: str | None = None,
    ) -> Job | None:
        """Owned failure: ``retry_at_ms`` None marks it failed, else pending at that time.

        ``reason`` is failReason exactly as upstream writes it. ``attempt`` is appended to
        the history (bounded as in ``complete``); its ``error_type`` and ``error_group``
        are stored on the job for grouping (see errorgroups.py).
        """

    async def record_attempt(self, job_id: str, owner: str, attempt: Attempt) -> bool:
        """Append ``attempt`` to a job still processing by ``owner``, changing nothing else.

        Used when a stopping instance gives up on a job (outcome ``shutdown``): the job
        stays processing for stale recovery, which then does not record the same attempt
        again. Stores without a history return False.
        """
        return False

    @abstractmethod
    async def release(self, job_ids: Sequence[str], owner: str, now_ms: int) -> int:
        """Return owned processing jobs to pending (claims that landed during shutdown)."""

    @abstractmethod
    async def heartbeat(self, owner: str, now_ms: int, job_ids: Sequence[str] | None = None) -> int:
        """Refresh lastHeartbeat and updatedAt of the jobs ``owner`` is processing: those of
        ``job_ids`` (the ones the scheduler is running) or, with None, every one.

        The scheduler passes its running jobs: a job it claimed but no longer runs (its
        outcome write failed, a claim whose answer was lost) must age out and be recovered,
        not be kept alive for as long as the instance runs other jobs (ADR 0004 addendum)."""

    @abstractmethod
    async def recover_stale(self, stale_before_ms: int, now_ms: int) -> int:
        """Return stale processing jobs to pending, appending an attempt record with outcome
        ``stale`` to each (unless its last record already is this attempt's: same
        ``startedAt`` and instance, as a shutdown record is), in the same bulk write.

        A processing job is stale when its liveness instant, ``lastHeartbeat`` where the job
        has one and ``lockedAt`` otherwise, is before ``stale_before_ms``. Liveness comes
        from the heartbeat, never from ``lockedAt`` alone (ADR 0004), so a long job whose
        owner keeps heartbeating is never handed to a second worker.
        """

    @abstractmethod
    async def purge_finished(self, status: JobStatus, updated_before_ms: int) -> int:
        """Retention: delete ``status`` jobs last updated before the cutoff."""

    async def purge_finished_batch(self, status: JobStatus, updated_before_ms: int, limit: int) -> int:
        """Retention in bounded writes: delete at most ``limit`` of the jobs ``purge_finished``
        would, and return how many; the caller repeats while it gets ``limit`` back. The
        default deletes them all in one write (correct, since the caller stops on a short
        count; a store serving many processes overrides it)."""
        return await self.purge_finished(status, updated_before_ms)

    async def acquire_lease(self, duty: str, holder: str, now_ms: int, ttl_ms: int) -> bool:
        """Hold the lease on ``duty`` (e.g. ``"retention"``) until ``now_ms + ttl_ms``: take
        it when nobody holds it or the holder's lease expired, renew it when ``holder`` holds
        it already; False while another holder's lease runs. The default grants it always
        (every process runs the duty, as before leases existed)."""
        return True

    async def release_lease(self, duty: str, holder: str) -> None:
        """Give the lease on ``duty`` up if ``holder`` holds it (a no-op otherwise)."""
        return None

    @abstractmethod
    async def has_live_claim(self, owner: str, heartbeat_after_ms: int) -> bool:
        """Whether a processing job is claimed by ``owner`` with a recent heartbeat."""

    @abstractmethod
    async def next_due_ms(self, names: Sequence[str]) -> int | None:
        """Earliest nextRunAt among pending jobs of these names (to arm a wake-up timer)."""

    # -- reads -------------------------------------------------------------------------------
    @abstractmethod
    async def get(self, job_id: str) -> Job | None: ...

    async def get_many(self, job_ids: Sequence[str]) -> dict[str, Job]:
        """The jobs with these ids, by id, in one read where the store can; ids of missing
        (or unreadable) jobs are absent. A console applying a busy feed reads each changed
        job once per flush instead of once per change (the feed then carries no documents)."""
        found: dict[str, Job] = {}
        for job_id in dict.fromkeys(job_ids):
            job = await self.get(job_id)
            if job is not None:
                found[job_id] = job
        return found

    @abstractmethod
    async def find(self, selector: StoreSelector, limit: int, skip: int) -> list[Job]:
        """Jobs matching the selector, sorted by nextRunAt ascending."""

    @abstractmethod
    async def page(
        self,
        filter: StoreListFilter,
        sort: JobSort,
        direction: CursorDirection,
        anchor: CursorAnchor | None,
        limit: int,
        include_data: bool = True,
    ) -> list[Job]:
        """Up to ``limit`` jobs strictly past the anchor in traversal order (keyset listing)."""

    @abstractmethod
    async def count(self, filter: StoreListFilter) -> int:
        """How many jobs match a listing filter."""

    async def count_in_steps(
        self, target: StoreListFilter | StoreSelector, step: int
    ) -> AsyncGenerator[StepCount, None]:
        """Count what a listing filter (or a bulk selector, its guard applied) matches, by
        status, in steps that each read about ``step`` jobs, yielding where the count stands
        after each; the last has ``done`` and the exact answer. Stop iterating (or cancel
        the task) to stop reading. A store whose counts are bounded otherwise (MongoDB's
        ``maxTimeMS``) may answer in one step: this default does, with one count per status."""
        statuses = _target_statuses(target)
        by_status: dict[JobStatus, int] = {}
        position: int | None = None
        for status in statuses:
            if isinstance(target, StoreSelector):
                # The first count's position bounds them all: a job unchanged since it is
                # unchanged at every later count, so it was counted (ADR 0015).
                found, at = await self.count_selected_as_of(replace(target, statuses=(status,)))
                position = at if position is None else position
            else:
                found = await self.count(replace(target, statuses=(status,)))
            by_status[status] = found
        if isinstance(target, StoreSelector) and position is None:
            _, position = await self.count_selected_as_of(target)  # nothing to count: the position alone
        total = sum(by_status.values())
        yield StepCount(by_status, total, total, True, position)

    async def page_in_steps(
        self,
        filter: StoreListFilter,
        sort: JobSort,
        direction: CursorDirection,
        anchor: CursorAnchor | None,
        limit: int,
        step: int,
        include_data: bool = True,
    ) -> AsyncGenerator[StepPage, None]:
        """``page`` in steps that each read about ``step`` jobs in the page's order, yielding
        the rows found so far after each; the last has ``done``. This default answers in one."""
        rows = await self.page(filter, sort, direction, anchor, limit, include_data)
        yield StepPage(rows, len(rows), len(rows), True)

    @abstractmethod
    async def stats(self, name: str | None) -> QueueStats: ...

    @abstractmethod
    async def stats_by_name(self) -> dict[str, QueueStats]: ...

    @abstractmethod
    async def names(self) -> list[str]:
        """Distinct job names present in the collection."""

    async def error_groups(self, name: str | None, since_ms: int | None, now_ms: int) -> list[ErrorGroupRow]:
        """Failed and retrying (pending with failCount > 0) jobs that carry an error group,
        grouped by it: counts, first/last ``updatedAt`` and per-minute counts over the hour
        ending at ``now_ms`` (see ``errorgroups.fold_buckets``). ``since_ms`` keeps only
        members last updated at or after it. No sample message (the caller fetches those)."""
        raise NotImplementedError(f"{type(self).__name__} does not group errors")

    async def error_group_sample(self, key: str) -> str | None:
        """The failReason of one member of the group (to show the message it stands for)."""
        return None

    # -- management: guarded single-job transitions -----------------------------------------
    @abstractmethod
    async def cancel(self, job_id: str, now_ms: int) -> Job | None:
        """pending → cancelled; None when the job is not pending (or gone)."""

    @abstractmethod
    async def retry(self, job_id: str, now_ms: int) -> tuple[Job, JobStatus] | None:
        """failed/cancelled → pending now; returns the job and its previous status.

        Raises ``UniqueKeyConflictError`` (naming the holder) when another pending or
        processing job of the same name holds the job's unique key.
        """

    @abstractmethod
    async def reschedule(self, job_id: str, run_at_ms: int, now_ms: int) -> Job | None:
        """Move a pending job's nextRunAt; None when not pending."""

    @abstractmethod
    async def delete(self, job_id: str) -> bool: ...

    async def count_selected(self, selector: StoreSelector) -> int:
        """How many jobs a bulk call with this selector would reach (its guard included)."""
        raise self._fleet_unsupported("counting a bulk selection")

    async def count_selected_as_of(self, selector: StoreSelector) -> tuple[int, int]:
        """``count_selected`` and where the count stands in the store's commit order.

        A bulk call whose selector carries that position as ``as_of`` reaches only jobs the
        count saw, as they were: never one written after it (a new job, or one that changed
        since), so it never reaches more than the count. Unlike a time stamp, the position
        holds when a write was stamped before the count but committed after it.
        """
        raise self._fleet_unsupported("counting a bulk selection")

    @abstractmethod
    async def cancel_many(self, selector: StoreSelector, now_ms: int) -> int: ...

    @abstractmethod
    async def retry_many(
        self, selector: StoreSelector, now_ms: int, spread_ms: int
    ) -> tuple[int, list[dict[str, str]]]:
        """Reset failCount, drop failReason and claim fields, nextRunAt spread over now…now+spread.

        Returns the count retried and one ``{"jobId": id, "error": message}`` per job left
        alone because another live job holds its unique key; every other job is retried.
        """

    @abstractmethod
    async def delete_many(self, selector: StoreSelector) -> int: ...

    # -- fleet and queue control (issue 13) -----------------------------------------------------
    # Not abstract, so a store written before the registry existed still opens; such a store
    # raises here and ``Monque`` reports it once (job:error) instead of failing its duties.
    async def repair_counts(self) -> list[tuple[str, str, int, int]] | None:
        """Recount the jobs per name and status the store keeps, from the jobs themselves;
        what differed as ``(name, status, kept, counted)``. None: this store keeps no counts
        (MongoDB answers counts from its indexes), so there is nothing to repair."""
        return None

    def _fleet_unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"the {self.kind or type(self).__name__} store does not support {what}")

    async def upsert_instance(self, record: InstanceRecord) -> None:
        """Write this instance's registry record (insert or replace), on its heartbeat tick."""
        raise self._fleet_unsupported("the instance registry")

    async def remove_instance(self, instance_id: str) -> None:
        """Remove an instance's registry record (on a clean stop)."""
        raise self._fleet_unsupported("the instance registry")

    async def list_instances(self) -> list[InstanceRecord]:
        """Every registry record, dead or alive, ordered by id."""
        raise self._fleet_unsupported("the instance registry")

    async def purge_instances(self, heartbeat_before_ms: int) -> int:
        """Retention: drop registry records whose last heartbeat is before the cutoff."""
        raise self._fleet_unsupported("the instance registry")

    async def owner_holdings(self) -> list[OwnerHolding]:
        """Processing jobs grouped by ``claimedBy`` (owners that never registered included)."""
        raise self._fleet_unsupported("owner listings")

    async def owner_records(self, owner: str) -> OwnerRecords:
        """What ``owner``'s heartbeat rewrites: its registry record and its processing jobs' stamps.

        Read only; dead-owner release reads it twice, at least twice the owner's heartbeat
        interval apart by the caller's monotonic clock, and calls the owner dead only if
        nothing in it moved (ADR 0007). No instant in it is compared with any clock.
        """
        raise self._fleet_unsupported("dead-owner release")

    async def release_unmoved_owner(self, owner: str, expected: OwnerRecords, now_ms: int) -> int | None:
        """Return ``owner``'s processing jobs to pending, only if its records have not moved
        since ``expected`` (``OwnerRecords.moved_since``), judged in the write itself.

        ``None`` (nothing written) when they moved: a beat that lands between the caller's
        last look and this write keeps every job of that owner. ``now_ms`` only stamps
        ``updatedAt``; it judges nothing.
        """
        raise self._fleet_unsupported("dead-owner release")

    async def set_paused(self, name: str, paused: bool, now_ms: int) -> bool:
        """Pause (or resume) claiming of ``name``; True when that changed the stored state."""
        raise self._fleet_unsupported("pause and resume")

    async def paused_names(self) -> dict[str, int]:
        """Paused job names -> when they were paused (ms)."""
        raise self._fleet_unsupported("pause and resume")

    async def add_outcome_counts(self, counts: dict[tuple[str, int], tuple[int, int]]) -> None:
        """Add ``{(name, minute): (completed, failed)}`` to the per-minute counters.

        ``minute`` is epoch ms // 60000. Increments, so several processes add to one row.
        """
        raise self._fleet_unsupported("outcome counters")

    async def outcome_counts(self, since_minute: int, name: str | None = None) -> list[tuple[str, int, int, int]]:
        """``(name, minute, completed, failed)`` rows from ``since_minute`` on, by name then minute."""
        raise self._fleet_unsupported("outcome counters")

    async def purge_outcome_counts(self, before_minute: int) -> int:
        """Retention of the per-minute counters."""
        raise self._fleet_unsupported("outcome counters")

    async def pending_health(self, now_ms: int) -> list[PendingHealth]:
        """Per name: pending jobs due by ``now_ms``, due later, and the oldest due nextRunAt."""
        raise self._fleet_unsupported("queue health")

    async def pending_split(self, now_ms: int, names: Sequence[str], cap: int) -> list[PendingSplit]:
        """Per name in ``names``: pending jobs due by ``now_ms`` and due later, each counted
        only up to ``cap``, and the earliest and latest pending nextRunAt.

        What metrics read on every scrape: each part is an index seek plus at most ``cap``
        index entries per name, never a count of a whole backlog (``pending_health`` counts
        every pending job). The caller takes the exact total from the kept counts.
        """
        raise self._fleet_unsupported("bounded pending counts")

    # -- change feed -------------------------------------------------------------------------
    @abstractmethod
    async def open_watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
    ) -> AsyncIterator[ChangeEvent]:
        """Open the change feed now and return an iterator of committed changes in commit order.

        Opening validates the resume token and reaches the database, so a broken feed or a
        token that can no longer be honoured raises here, not on the first event.
        ``statuses`` keeps only changes that left a job in one of them, and no deletes (a
        deleted job is in no status), on both stores, so a mass delete or a purge never
        reaches every worker; the processor uses it to hear about pending work without
        reading its own traffic. Without ``statuses`` every change passes, deletes included.
        Without a token the watch starts at the current end of the feed. Iteration may raise
        ConnectionError when the feed breaks; callers reopen with the last token they saw.
        """

    def watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
    ) -> AsyncIterator[ChangeEvent]:
        """``open_watch`` as a plain async iterator: ``async for change in store.watch(): ...``."""

        async def changes() -> AsyncIterator[ChangeEvent]:
            stream = await self.open_watch(resume_after, full_document=full_document, statuses=statuses)
            async for change in stream:
                yield change

        return changes()


def _target_statuses(target: StoreListFilter | StoreSelector) -> tuple[JobStatus, ...]:
    """The statuses a count's target can match (a selector's guard and its listing's statuses)."""
    wanted = set(target.statuses) if target.statuses is not None else set(JobStatus)
    if isinstance(target, StoreSelector) and target.listing is not None and target.listing.statuses is not None:
        wanted &= set(target.listing.statuses)
    return tuple(status for status in JobStatus if status in wanted)
