"""The store's ports: one small Protocol per scheduler service, which is the only thing that
service may hold of the store (ADR 0018).

``JobStore`` (base.py) is every port at once: the composite a backend implements and the
``Monque`` facade holds. The facade hands each service its port (``Monque.__init__``), so a
service's type says which store calls it makes, and a store call added to a service that
its port lacks is a mypy error, not a silent widening. tests/test_store_ports.py keeps
every scheduler service and ``metrics.py`` to these types.

The defaults here are the ones a minimal backend inherits (through ``JobStore``); each
port is still a structural type, so a test may pass any object with the right methods.
All instants are epoch milliseconds. Every method that changes a job applies its guard
atomically and reports what it actually wrote ("no event for a transition that did not
happen" holds on every store).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..attempts import Attempt
from ..change_rows import ChangeRows
from ..cursor import CursorAnchor
from ..errorgroups import ErrorGroupRow
from ..job import ChangeEvent, CursorDirection, Job, JobSort, JobStatus, NewJob, QueueStats
from ..run_progress import Progress
from .values import PendingSplit, StepCount, StepPage, StoreListFilter, StoreOpenOptions, StoreSelector

if TYPE_CHECKING:
    from ..fleet_records import InstanceRecord, OwnerHolding, OwnerRecords, PendingHealth

#: The port names, in the order of the store's life (ADR 0018's table).
PORTS = ("Intake", "Claims", "Liveness", "Reads", "Management", "Fleet", "Retention", "Feed", "Admin")


def unsupported(store: object, what: str) -> NotImplementedError:
    """The error a port's default raises for what this store cannot do."""
    kind = getattr(store, "kind", "") or type(store).__name__
    return NotImplementedError(f"the {kind} store does not support {what}")


class Intake(Protocol):
    """Putting jobs in: one, many (all or none, built lazily in chunks), or complete jobs as
    they were exported.

    Used by ``scheduler/intake.py`` (enqueue, enqueue_many, import_jobs) and, for
    ``append_from_thread``, by the synchronous client (``monque_engine.sync``).
    """

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
        restored; not a way to enqueue work (nothing is validated or deduplicated here: the
        caller, ``Monque.import_jobs``, has checked every field, ``import_check``). Watchers see each job as an insert, and counts
        include it, as after the store's own writes. An id that is already stored, or a
        unique key a live job holds, makes the import fail; what is then kept depends on
        the store (SQLite: nothing, it is one transaction). Returns how many were stored."""
        raise unsupported(self, "importing jobs")

    def append_from_thread(self, job: NewJob) -> bool:
        """Store a plain job (no unique key, no schedule) from a thread other than the store's
        event loop, without waiting for that loop: a synchronous producer's run of enqueues
        (``monque_engine.sync``). True: durable, and seen by every read from now on, as after
        ``insert``. False (this default): the store cannot now, and the caller inserts it
        through the loop."""
        return False


class Claims(Protocol):
    """What a worker does to the jobs it runs: claim due jobs, then complete, fail or release
    them under the claim's guard (owner and status), and find the next due time to arm a
    timer. Batching lives behind ``complete``: a store may answer it with a future its batch
    settles (SQLite), and ``records_success_from_row`` tells the processor it need not build
    the success record. Both have defaults here, so a store that does neither just works.

    Used by ``scheduler/processor.py``.
    """

    #: The store builds a completion's attempt record from the row itself (SQLite, in SQL),
    #: so the processor skips building an ``Attempt`` on the hot path (~2.5 µs a job).
    records_success_from_row: bool = False

    @abstractmethod
    async def claim(self, name: str, owner: str, now_ms: int, limit: int, heartbeat_interval_ms: int) -> list[Job]:
        """Atomically take up to ``limit`` due pending jobs of ``name``, earliest nextRunAt first."""

    @abstractmethod
    def complete(
        self,
        job_id: str,
        owner: str,
        now_ms: int,
        next_run_at_ms: int | None,
        attempt: Attempt | None = None,
        *,
        result: Any = None,
    ) -> Awaitable[Job | None]:
        """Owned completion: ``next_run_at_ms`` None marks it completed, else pending again
        (recurring) with failCount 0. None when the job is no longer processing by ``owner``.

        ``result``: what the handler returned, already checked (``results.stored_result``),
        stored as the job's ``result`` in the same write; None writes none (and the processor
        then leaves the keyword out, so a wrapper with the old signature still works).

        Appends ``attempt`` (outcome ``completed``) to the job's history, keeping the last
        ``MAX_ATTEMPTS``, and clears failReason, errorType and errorGroup, in the same write.
        A store may build the record from the row itself (the claim's ``lockedAt`` and
        ``claimedBy``, ``failCount + 1``), which is what ``attempt`` holds.

        Not a coroutine function: the processor awaits what it returns, so a store may hand
        back a future its own batching settles (SQLite queues one-off completions and writes a
        loop turn's worth in one statement) and the hot path has no coroutine layer; an
        ``async def`` override (MongoDB, a test's wrapper) is just as good. One entry point,
        so a wrapper sees every completion without the store looking for subclasses.
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

    async def mark_over_limit(self, job_id: str, owner: str, now_ms: int) -> bool:
        """Stamp ``overLimitAt`` on a job still processing by ``owner`` (ADR 0019): its sync
        handler ran past its time limit and its thread goes on, so the job stays owned and
        beating; the stamp lets any reader (the console) say so. Stores that keep no such
        field return False (the limit still applies; only the display is missing)."""
        return False

    async def stop_requests(self, owner: str, job_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """``owner``'s processing jobs among ``job_ids`` that carry a stop request (issue 37,
        ADR 0019): id → ``(lockedAt, stopRequestedAt)`` in epoch ms; the processor applies
        a request only to the attempt it belongs to (``stopRequestedAt >= lockedAt``, the
        claim it runs). Read on the heartbeat when the change feed is down. Stores that keep
        no stop request find none."""
        return {}

    async def cancel_owned(self, job_id: str, owner: str, now_ms: int, attempt: Attempt) -> Job | None:
        """processing → cancelled by its owner after an operator's stop request, the claim
        released and ``attempt`` (outcome ``cancelled``) appended; None when the job is no
        longer processing by ``owner``."""
        raise unsupported(self, "stopping a running job")

    async def report_progress(self, job_id: str, owner: str, now_ms: int, progress: Progress) -> bool:
        """Store the handler's progress report on a job still processing by ``owner``;
        False when it is not (the run ended, or the job was recovered). Stores that keep no
        progress return False."""
        return False

    @abstractmethod
    async def release(self, job_ids: Sequence[str], owner: str, now_ms: int) -> int:
        """Return owned processing jobs to pending (claims that landed during shutdown)."""

    @abstractmethod
    async def next_due_ms(self, names: Sequence[str]) -> int | None:
        """Earliest nextRunAt among pending jobs of these names (to arm a wake-up timer)."""


class Liveness(Protocol):
    """Liveness is the heartbeat (ADR 0004): beat the jobs this instance runs, and return the
    jobs whose owner stopped beating to pending.

    Used by ``scheduler/lifecycle.py`` (heartbeat, stale recovery) and ``Monque.initialize``
    (has_live_claim).
    """

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
    async def has_live_claim(self, owner: str, heartbeat_after_ms: int) -> bool:
        """Whether a processing job is claimed by ``owner`` with a recent heartbeat."""


class Reads(Protocol):
    """Everything that only looks: single jobs, keyset pages and counts (whole or in steps),
    statistics, error groups, and the bounded pending split the metrics scrape.

    Used by ``scheduler/query.py``, ``scheduler/manager.py`` (get, count_in_steps), ``metrics.py``
    (stats_by_name, pending_split) and ``Monque.job_names`` (names).
    """

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

    @abstractmethod
    def count_in_steps(self, target: StoreListFilter | StoreSelector, step: int) -> AsyncGenerator[StepCount, None]:
        """Count what a listing filter (or a bulk selector, its guard applied) matches, by
        status, in steps that each read about ``step`` jobs, yielding where the count stands
        after each; the last has ``done`` and the exact answer. Stop iterating (or cancel
        the task) to stop reading. ``JobStore`` has a one-step default (it needs Management's
        ``count_selected_as_of`` for a selector, so it lives on the composite)."""

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

    async def error_attempt_counts(
        self, keys: Sequence[str], since_minute: int
    ) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
        """Error groups' failed-attempt counters (rows named ``errorgroups.error_counter_name``):
        per group key in ``keys``, its first minute on record, and ``(key, minute, failed)``
        rows from ``since_minute`` on. Index seeks per key, never a scan of every counter.
        A store without counters has none: ``({}, [])`` (the errors view then reads the
        members alone)."""
        return {}, []

    async def pending_split(self, now_ms: int, names: Sequence[str], cap: int) -> list[PendingSplit]:
        """Per name in ``names``: pending jobs due by ``now_ms`` and due later, each counted
        only up to ``cap``, and the earliest and latest pending nextRunAt.

        What metrics read on every scrape: each part is an index seek plus at most ``cap``
        index entries per name, never a count of a whole backlog (``pending_health`` counts
        every pending job). The caller takes the exact total from the kept counts.
        """
        raise unsupported(self, "bounded pending counts")


class Management(Protocol):
    """Guarded transitions an operator asks for: cancel, retry, reschedule, delete, one job or
    a selection, and the count (with its position, ADR 0015) that bounds a bulk call.
    Which statuses each action may touch is defined once (``guards.py``); the scheduler
    (``manager.py``) applies it to a selector, and the store in the same write.

    Used by ``scheduler/manager.py``.
    """

    #: What a count's position (``count_selected_as_of``) is a position in, set when the
    #: store opens: the same for every process on this store, different for any other (a
    #: SQLite file's own id, kept in its meta table; a MongoDB deployment's hosts, database
    #: and collection). A bound from another scope is refused: there it would bound nothing.
    position_scope: str = ""

    @abstractmethod
    async def cancel(self, job_id: str, now_ms: int) -> Job | None:
        """pending → cancelled; None when the job is not pending (or gone)."""

    async def request_stop(self, job_id: str, owner: str, locked_at_ms: int, now_ms: int) -> Job | None:
        """Stamp a stop request on the running attempt ``owner`` claimed at ``locked_at_ms``
        (issue 37, ADR 0019), no earlier than that claim, in a write the owner hears of (the
        feed's ``stop_requested`` change); None when that attempt is not running any more."""
        raise unsupported(self, "stopping a running job")

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
        raise unsupported(self, "counting a bulk selection")

    async def count_selected_as_of(self, selector: StoreSelector) -> tuple[int, int]:
        """``count_selected`` and where the count stands in the store's commit order.

        A bulk call whose selector carries that position as ``as_of`` reaches only jobs the
        count saw, as they were: never one written after it (a new job, or one that changed
        since), so it never reaches more than the count. Unlike a time stamp, the position
        holds when a write was stamped before the count but committed after it.
        """
        raise unsupported(self, "counting a bulk selection")

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


class Fleet(Protocol):
    """The instance registry, who holds which jobs, dead-owner release (ADR 0007), paused names,
    per-minute outcome counters and queue health (issue 13). Not abstract, so a store
    written before the registry existed still opens: it raises here and ``Monque`` reports
    it once (job:error) instead of failing its duties.

    Used by ``scheduler/fleet.py`` (and ``scheduler/liveness.py``'s dead-owner release, which
    it runs).
    """

    async def upsert_instance(self, record: InstanceRecord) -> None:
        """Write this instance's registry record (insert or replace), on its heartbeat tick."""
        raise unsupported(self, "the instance registry")

    async def remove_instance(self, instance_id: str) -> None:
        """Remove an instance's registry record (on a clean stop)."""
        raise unsupported(self, "the instance registry")

    async def list_instances(self) -> list[InstanceRecord]:
        """Every registry record, dead or alive, ordered by id."""
        raise unsupported(self, "the instance registry")

    async def purge_instances(self, heartbeat_before_ms: int) -> int:
        """Retention: drop registry records whose last heartbeat is before the cutoff."""
        raise unsupported(self, "the instance registry")

    async def owner_holdings(self) -> list[OwnerHolding]:
        """Processing jobs grouped by ``claimedBy`` (owners that never registered included)."""
        raise unsupported(self, "owner listings")

    async def owner_records(self, owner: str) -> OwnerRecords:
        """What ``owner``'s heartbeat rewrites: its registry record and its processing jobs' stamps.

        Read only; dead-owner release reads it twice, at least twice the owner's heartbeat
        interval apart by the caller's monotonic clock, and calls the owner dead only if
        nothing in it moved (ADR 0007). No instant in it is compared with any clock.
        """
        raise unsupported(self, "dead-owner release")

    async def release_unmoved_owner(self, owner: str, expected: OwnerRecords, now_ms: int) -> int | None:
        """Return ``owner``'s processing jobs to pending, only if its records have not moved
        since ``expected`` (``OwnerRecords.moved_since``), judged in the write itself.

        ``None`` (nothing written) when they moved: a beat that lands between the caller's
        last look and this write keeps every job of that owner. ``now_ms`` only stamps
        ``updatedAt``; it judges nothing.
        """
        raise unsupported(self, "dead-owner release")

    async def set_paused(self, name: str, paused: bool, now_ms: int) -> bool:
        """Pause (or resume) claiming of ``name``; True when that changed the stored state."""
        raise unsupported(self, "pause and resume")

    async def paused_names(self) -> dict[str, int]:
        """Paused job names -> when they were paused (ms)."""
        raise unsupported(self, "pause and resume")

    async def add_outcome_counts(
        self, counts: dict[tuple[str, int], tuple[int, int]], batch: str | None = None
    ) -> None:
        """Add ``{(name, minute): (completed, failed)}`` to the per-minute counters.

        ``minute`` is epoch ms // 60000. Increments, so several processes add to one row.
        ``batch`` names this set of increments: the caller sends a batch whose write failed
        again with the same id, so a store that cannot tell whether a failed write was
        applied (MongoDB: a retried write applied, its reply lost) must apply each row of a
        batch at most once. A store whose failed writes are never applied (SQLite: one
        transaction) may ignore it. A store that applied part of a batch may raise an
        error with ``unapplied``, the counts it did not apply: only those are sent again.
        """
        raise unsupported(self, "outcome counters")

    async def outcome_counts(self, since_minute: int, name: str | None = None) -> list[tuple[str, int, int, int]]:
        """``(name, minute, completed, failed)`` rows from ``since_minute`` on, by name then minute."""
        raise unsupported(self, "outcome counters")

    async def purge_outcome_counts(self, before_minute: int) -> int:
        """Retention of the per-minute counters."""
        raise unsupported(self, "outcome counters")

    async def pending_health(self, now_ms: int) -> list[PendingHealth]:
        """Per name: pending jobs due by ``now_ms``, due later, and the oldest due nextRunAt."""
        raise unsupported(self, "queue health")


class Retention(Protocol):
    """Deleting finished jobs at fleet scale: one lease holder purges, in bounded batches
    (issue 27).

    Used by ``scheduler/retention.py``.
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


class Feed(Protocol):
    """The change feed: committed changes in commit order, resumable from a token.

    Used by ``scheduler/resilient_watch.py`` (built by ``scheduler/lifecycle.py``) and
    ``Monque.watch`` / ``open_watch`` / ``resilient_watch``.
    """

    @abstractmethod
    async def open_watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
        names: tuple[str, ...] | None = None,
    ) -> AsyncIterator[ChangeEvent]:
        """Open the change feed now and return an iterator of committed changes in commit order.

        Opening validates the resume token and reaches the database, so a broken feed or a
        token that can no longer be honoured raises here, not on the first event.
        ``statuses`` keeps only changes that left a job in one of them, and no deletes (a
        deleted job is in no status), on both stores, so a mass delete or a purge never
        reaches every worker; the processor uses it to hear about pending work without
        reading its own traffic. Without ``statuses`` every change passes, deletes included.
        ``names`` (with ``statuses``) lets a store drop changes of jobs of other names where
        the change carries the name (MongoDB does, in the server); a change that does not
        carry it still passes, so the consumer checks the name either way and treats a
        name-less change as concerning every name (a store may also ignore ``names``).
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


class RowFeed(Protocol):
    """A feed that also hands every change a pull at a time, as plain rows (``ChangeRows``).

    Optional (the SQLite store has it): ``ResilientWatch`` in row mode uses it when the store
    has ``open_watch_rows``, and otherwise sees the ``ChangeEvent`` stream one change a batch.
    A console following a drain reads ~15,000 changes a second; one event object, one
    generator step and one callback per change were over half of its UI thread (issue 40).
    """

    async def open_watch_rows(self, resume_after: Any = None) -> AsyncIterator[ChangeRows]:
        """Every change after ``resume_after`` (every operation and status, no documents), in
        commit order, a pull per item; each batch's ``token`` resumes after it. Raises as
        ``open_watch`` does for a token it cannot honour."""
        ...


class Admin(Protocol):
    """The store as a whole: opening and closing it, whether it can still be trusted, its
    kept counts, and how it names itself. Only the facade holds the composite
    (``JobStore``) and hands each service its port.

    Used by ``Monque`` alone (the facade): open, close, health, kept counts, and what it shows.
    """

    #: The location with any password masked: safe for titles, logs and errors.
    display_url: str = ""

    #: Short kind name shown to people ("sqlite", "mongodb").
    kind: str = ""

    #: Opened read-only (SQLite ``mode=ro``): every write raises ConnectionError.
    read_only: bool = False

    #: Where display reads (listings, counts, statistics) go: "primary" unless a console
    #: asked a MongoDB store for a secondary (``MongoStore.set_display_read_preference``).
    display_read_preference: str = "primary"

    def display_staleness_s(self) -> float | None:
        """How far behind the primary display reads may be, in seconds; None when they go to
        the primary (every store but a MongoDB one reading from a secondary)."""
        return None

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

    async def repair_counts(self) -> list[tuple[str, str, int, int]] | None:
        """Recount the jobs per name and status the store keeps, from the jobs themselves;
        what differed as ``(name, status, kept, counted)``. None: this store keeps no counts
        (MongoDB answers counts from its indexes), so there is nothing to repair."""
        return None
