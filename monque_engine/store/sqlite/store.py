"""The embedded SQLite store: one file, WAL, safe for several processes on one machine.

Every transition is one guarded statement inside a ``BEGIN IMMEDIATE`` transaction, so
claims, owned completions and bulk updates are atomic across processes exactly as the
MongoDB store's ``findOneAndUpdate`` / ``updateMany`` are. See ``runner.py`` for how the
connections are driven and ``feed.py`` for the cross-process change feed.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ...attempts import Attempt
from ...change_rows import ChangeRows
from ...cursor import CursorAnchor
from ...errorgroups import ErrorGroupRow, hour_window
from ...errors import ConnectionError, StoreLostError
from ...job import ChangeEvent, CursorDirection, Job, JobSort, JobStatus, NewJob, QueueStats
from ...run_progress import Progress
from ..base import JobStore, PendingSplit, StepCount, StepPage, StoreListFilter, StoreOpenOptions, StoreSelector
from . import (
    admin,
    claims,
    counted,
    fleet,
    imports,
    liveness,
    location,
    maintenance,
    management,
    reads,
    retention,
    running,
    scan,
    statements,
)
from .busy import begin_immediate
from .completions import Completions
from .feed import ChangeFeed
from .identity import FileIdentity
from .inbox import InboxProducer, InboxView
from .intake import Intake
from .journal import Journal
from .readkind import Jobs, Read, Settled, Tally
from .runner import MISS, Operation, ReadRunner, WriteRunner
from .schema import SCHEMA_VERSION, Tables, check_collection_name
from .statements import Prepared
from .unreadable import UnreadableWarnings
from .url import SqliteSettings, parse_sqlite_url

if TYPE_CHECKING:
    from ...fleet_records import InstanceRecord, OwnerHolding, OwnerRecords, PendingHealth

T = TypeVar("T")

#: Claims of at most this many jobs may take the inline path (measured at concurrency 5:
#: ~4k -> ~5k jobs/s; wider claims showed no gain and would hold the loop for milliseconds).
INLINE_CLAIM_MAX = 16
#: A claim that carries the completions queued that turn (one commit for both) may run
#: inline up to this size: at concurrency 64 that measured ~+13 % (median of 4) for a loop
#: held 1.7 ms (p50) / 2.5 ms (p90) per round instead of idling while the thread commits.
INLINE_MERGED_MAX = 64


class SqliteStore(JobStore):
    kind = "sqlite"
    records_success_from_row = True

    def __init__(self, settings: SqliteSettings) -> None:
        self.settings = settings
        self.display_url = settings.display_url
        self.read_only = settings.read_only
        self._tables: Tables | None = None
        self._writer: WriteRunner | None = None
        self._reader: ReadRunner | None = None
        self._feed: ChangeFeed | None = None
        self._maintenance: asyncio.Task[None] | None = None
        self._open_lock = asyncio.Lock()
        #: Queued completions and the jobs claimed without a written outcome (completions.py).
        self._batch = Completions(self._describe)
        #: The file, resolved when the store is opened: connections made later (a reader's,
        #: the checkpointer's) and the identity checks must not follow an ``os.chdir``.
        self._file = os.path.abspath(settings.path)
        self._identity = FileIdentity(self._file, settings.path)
        self._on_fatal: Any = None
        self._intake: Intake | None = None  # inserts (intake.py), built once per open
        self._prepared: Prepared | None = None  # the hot paths' statements, built once per open
        self._journal: Journal | None = None
        #: Who holds the retention lease (``purge_finished``): this store object, in this process.
        self._lease = retention.RetentionLease()
        self._unreadable = UnreadableWarnings(self._describe)
        #: This process's inbox appends (inbox.py): set once a writable store's schema is in
        #: place; None when read-only or closed.
        self._producer: InboxProducer | None = None
        #: Set once a read-only store is open: its reads see the inbox's rows (inbox.py).
        self._inbox_view: InboxView | None = None
        #: The schema version this open upgraded the file from (None: it was current, or new).
        self.upgraded_from: int | None = None
        #: The schema version this code writes (what ``migrate`` reports).
        self.schema_version = SCHEMA_VERSION

    @classmethod
    def from_url(cls, url: str, **overrides: Any) -> SqliteStore:
        return cls(parse_sqlite_url(url, **overrides))

    check_collection_name = staticmethod(check_collection_name)  # a table name (schema.py)
    locate = staticmethod(location.locate)  # the file, and its collections read with mode=ro

    # -- the Admin port: opening and closing are in admin.py ------------------------------------
    def _describe(self) -> str:
        return f"SQLite database {self.settings.path}"

    async def open(self, options: StoreOpenOptions) -> None:
        await admin.open_store(self, options)

    # -- file identity and health -------------------------------------------------------------
    def health_error(self) -> ConnectionError | None:
        """Why this store cannot be trusted any more (its file was deleted, replaced or found
        damaged, or a thread of it died), else None."""
        if self._writer is None and self._reader is None:
            return None
        try:
            self._identity.check()
        except StoreLostError as error:
            return error
        for runner in (self._writer, self._reader):
            if runner is not None and runner.broken is not None:
                return runner.broken  # a thread of it died: nothing more is read or written
        return None

    def _committed(self) -> None:
        if self._feed is not None:
            self._feed.committed()

    async def close(self) -> None:
        await admin.close_store(self)

    async def repair_counts(self) -> list[tuple[str, str, int, int]]:
        """Recount the kept counts from the job table, in one write transaction (journal.py):
        the way back after rows were changed outside the store, e.g. in the sqlite3 shell."""
        return await self._write(self._j.rebuild_counts)

    async def prune_feed(self) -> int:
        """Trim the change table (and drop emptied error groups' counts) now, in bounded
        transactions (normally done in the background: maintenance.py)."""
        return await maintenance.prune(self._write, self._j, self.settings.feed_retention)

    # -- plumbing -----------------------------------------------------------------------------
    def _not_open(self) -> NoReturn:
        raise ConnectionError(f"{self._describe()} is not open; call initialize() first")

    @property
    def _t(self) -> Tables:
        return self._not_open() if self._tables is None else self._tables

    @property
    def _p(self) -> Prepared:
        return self._not_open() if self._prepared is None else self._prepared

    @property
    def _in(self) -> Intake:
        return self._not_open() if self._intake is None else self._intake

    def _runner_w(self) -> WriteRunner:
        return self._not_open() if self._writer is None else self._writer

    def _runner_r(self) -> ReadRunner:
        return self._not_open() if self._reader is None else self._reader

    def _writable(self) -> WriteRunner:
        if self.settings.read_only and self._reader is not None:
            raise ConnectionError(
                f"{self._describe()} is open read-only (mode=ro); drop mode=ro (or --read-only) to change jobs"
            )
        return self._runner_w()

    async def _write(self, op: Operation[T], inline: bool = False, coalesce: bool = False) -> T:
        return await self._writable().run(op, inline=inline, coalesce=coalesce)

    def _submit_write(self, op: Operation[T]) -> asyncio.Future[T]:
        """Queue ``op`` on the write thread and return its future without awaiting it."""
        return self._writable().submit(op)

    async def _read(self, read: Read[T]) -> T:
        """Run a read that sees every job whose enqueue returned before it started, treating
        the inbox as its kind needs (readkind.py, inbox.py). Reads never absorb: a read that
        waited for the write lock to move the rows (as reads did until 2026-12-04) gave up
        what WAL promises readers, and wrote from processes that only look (the console).
        """
        view = self._inbox_view
        if view is None or isinstance(read, Settled):
            return await self._read_any(read.op)
        combine = read.combine if isinstance(read, Tally) else None
        return await self._read_any(functools.partial(view.read, read.op, combine=combine))

    async def _read_any(self, op: Operation[T]) -> T:
        return await reads.run(self._runner_r(), op)

    @property
    def _j(self) -> Journal:
        return self._not_open() if self._journal is None else self._journal

    # -- intake -----------------------------------------------------------------------------
    async def insert(self, job: NewJob) -> Job:
        producer = self._producer
        # A plain job deep in one task's run of enqueues: one append to the inbox (inbox.py),
        # when it can run inline now; otherwise the job row, as below (the inbox has no
        # columns for a unique key, a schedule or a time limit).
        if (
            producer is not None
            and job.unique_key is None
            and job.repeat_interval is None
            and job.timeout_ms is None
            and producer.append(job)
        ):
            await producer.appended_one()
            return job.to_job()
        intake = self._in
        return await self._write(lambda conn: intake.one(conn, job), inline=True, coalesce=True)

    def append_from_thread(self, job: NewJob) -> bool:
        producer = self._producer  # to the inbox, inline on the calling thread (inbox.py)
        return producer is not None and producer.append_from_thread(job)

    async def insert_many(self, jobs: Sequence[NewJob]) -> list[Job]:
        intake = self._in
        if all(job.unique_key is None for job in jobs):
            # Submitted first, then the Job objects are built on the loop while the write
            # thread inserts (sqlite3 lets go of the GIL while it steps): the two overlap.
            pending = self._submit_write(lambda conn: intake.plain(conn, jobs))
            stored = [j.to_job() for j in jobs]
            await pending
            return stored
        return await self._write(lambda conn: [intake.one(conn, j) for j in jobs])

    async def insert_chunks(self, chunks: Iterable[list[NewJob]]) -> list[Job]:
        return await self._in.chunks(self._submit_write, chunks)

    async def import_jobs(self, jobs: Sequence[Job]) -> int:
        return await self._write(imports.imported(self._t, self._j, jobs)) if jobs else 0

    # -- processing -----------------------------------------------------------------------------
    async def claim(self, name: str, owner: str, now_ms: int, limit: int, heartbeat_interval_ms: int) -> list[Job]:
        op = claims.claim(
            self._p.claim, self._t, self._j, self._unreadable, name, owner, now_ms, limit, heartbeat_interval_ms
        )
        # A small claim (the default concurrency is 5) is dominated by the thread hop, so it
        # may run inline when the writer is idle; a wide one stays off the loop.
        merged = MISS if self.settings.read_only else await self._batch.claim_with(op, limit <= INLINE_MERGED_MAX)
        if merged is not MISS:
            jobs = merged
        else:
            jobs = await self._write(op, inline=limit <= INLINE_CLAIM_MAX)
        claimed = self._batch.claimed
        for job in jobs:
            claimed[job.id] = job
        return jobs

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
        """A one-off completion of a job this store claimed is queued (completions.py): the
        future returned settles when the flush of that loop turn wrote it, with no coroutine
        layer between the processor and the flush. Any other completion is written alone. The
        attempt record is built in SQL from the row (the values ``attempt`` holds), so a batch
        of completions stays one statement; a subclass wrapping this method wraps both paths.
        A completion with a ``result`` is written alone too (the batch's statement has no
        column for it, so a handler returning None costs the batch nothing)."""
        if next_run_at_ms is None and result is None:
            queued = self._batch.queue(self._runner_w().loop, job_id, owner, now_ms)  # raises if closed
            if queued is not None:
                return queued
        return self._complete_alone(job_id, owner, now_ms, next_run_at_ms, result)

    async def _complete_alone(
        self, job_id: str, owner: str, now_ms: int, next_run_at_ms: int | None, result: Any = None
    ) -> Job | None:
        self._batch.claimed.pop(job_id, None)
        assignments, params = statements.completion(now_ms, next_run_at_ms, result)
        return await self._write(claims.owned_update(self._t, self._j, assignments, params, job_id, owner))

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
        self._batch.claimed.pop(job_id, None)
        recorded = None if attempt is None else (attempt.to_json(), attempt.error_type)
        assignments, params = statements.failure(now_ms, fail_count, reason, retry_at_ms, recorded, error_group)
        op = claims.owned_update(self._t, self._j, assignments, params, job_id, owner)
        return await self._write(op)

    async def record_attempt(self, job_id: str, owner: str, attempt: Attempt) -> bool:
        self._batch.claimed.pop(job_id, None)  # its outcome will not be a batched completion any more
        assignments, params = statements.attempt_recorded(attempt.to_json())
        op = claims.owned_update(self._t, self._j, assignments, params, job_id, owner)
        return await self._write(op) is not None

    async def mark_over_limit(self, job_id: str, owner: str, now_ms: int) -> bool:
        self._batch.claimed.pop(job_id, None)  # its outcome is a failure (timed_out), never batched
        params = (now_ms, now_ms)
        op = claims.owned_update(self._t, self._j, "over_limit_at = ?, updated_at = ?", params, job_id, owner)
        return await self._write(op) is not None

    async def stop_requests(self, owner: str, job_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        return await self._read(running.stop_requests(self._t, owner, list(job_ids))) if job_ids else {}

    async def cancel_owned(self, job_id: str, owner: str, now_ms: int, attempt: Attempt) -> Job | None:
        self._batch.claimed.pop(job_id, None)
        return await self._write(running.cancelled_owned(self._t, self._j, job_id, owner, now_ms, attempt.to_json()))

    async def report_progress(self, job_id: str, owner: str, now_ms: int, progress: Progress) -> bool:
        return await self._write(running.progress_reported(self._t, self._j, job_id, owner, now_ms, progress.to_json()))

    async def release(self, job_ids: Sequence[str], owner: str, now_ms: int) -> int:
        for job_id in job_ids:
            self._batch.claimed.pop(job_id, None)
        if not job_ids:
            return 0
        return await self._write(claims.released(self._t, self._j, list(job_ids), owner, now_ms))

    # -- liveness (liveness.py) and retention (retention.py) ------------------------------------------------------------------
    async def heartbeat(self, owner: str, now_ms: int, job_ids: Sequence[str] | None = None) -> int:
        t = self._t  # a closed store says so, even for no jobs
        if job_ids is not None and not job_ids:
            return 0
        return await self._write(liveness.heartbeat(t, owner, now_ms, job_ids))

    async def recover_stale(self, stale_before_ms: int, now_ms: int) -> int:
        return await self._write(liveness.recovered(self._t, self._j, stale_before_ms, now_ms))

    async def has_live_claim(self, owner: str, heartbeat_after_ms: int) -> bool:
        return await self._read(liveness.has_live_claim(self._t, owner, heartbeat_after_ms))

    async def purge_finished(self, status: JobStatus, updated_before_ms: int) -> int:
        """Retention: a name at a time, in chunks, one process at a time per file (retention.py)."""
        return await retention.purge_finished(
            self._write, self._read, self._t, self._j, self._lease, status, updated_before_ms
        )

    # -- reads (reads.py) -------------------------------------------------------------------------
    async def next_due_ms(self, names: Sequence[str]) -> int | None:
        return await self._read(reads.next_due(self._t, names)) if names else None

    async def get(self, job_id: str) -> Job | None:
        return await self._read(reads.get(self._t, job_id))

    async def get_many(self, job_ids: Sequence[str]) -> dict[str, Job]:
        ids = [job_id for job_id in dict.fromkeys(job_ids) if isinstance(job_id, str)]
        return await self._read(reads.get_many(self._t, self._unreadable, ids)) if ids else {}

    async def find(self, selector: StoreSelector, limit: int, skip: int) -> list[Job]:
        return await self._read(reads.find(self._t, self._unreadable, selector, limit, skip))

    async def page(
        self,
        filter: StoreListFilter,
        sort: JobSort,
        direction: CursorDirection,
        anchor: CursorAnchor | None,
        limit: int,
        include_data: bool = True,
    ) -> list[Job]:
        op = reads.page(self._t, self._unreadable, filter, sort, direction, anchor, limit, include_data)
        return await self._read(op)

    async def count(self, filter: StoreListFilter) -> int:
        if scan.walks_a_status_index(filter):  # text with statuses: in steps over the key (scan.py)
            found, _ = await scan.count_of(self.count_in_steps(filter, scan.DEFAULT_STEP_JOBS))
            return found
        if counted.filter_answerable(filter):
            return await self._read(reads.kept_count(self._t, filter))
        return await self._read(reads.count(self._t, filter))

    def count_in_steps(self, target: StoreListFilter | StoreSelector, step: int) -> AsyncGenerator[StepCount, None]:
        return scan.count_in_steps(self._read, self._t, self._inbox_view, target, step)

    def page_in_steps(self, filter: StoreListFilter, *args: Any, **kwargs: Any) -> AsyncGenerator[StepPage, None]:
        return scan.page_in_steps(self._read, self._t, self._inbox_view, self._unreadable, filter, *args, **kwargs)

    async def stats(self, name: str | None) -> QueueStats:
        sql, params = counted.stats_sql(self._t, name)
        return reads.stats(await self._read(reads.kept(sql, params)))

    async def stats_by_name(self) -> dict[str, QueueStats]:
        sql, params = counted.stats_sql(self._t, None)
        return reads.stats_by_name(await self._read(reads.kept(sql, params)))

    async def names(self) -> list[str]:
        return [name for (name,) in await self._read(reads.kept(counted.names_sql(self._t)))]

    async def error_groups(self, name: str | None, since_ms: int | None, now_ms: int) -> list[ErrorGroupRow]:
        return await self._read(reads.error_groups(self._t, name, since_ms, hour_window(now_ms)))

    async def error_group_sample(self, key: str) -> str | None:
        return await self._read(reads.error_group_sample(self._t, key))

    async def count_selected(self, selector: StoreSelector) -> int:
        found, _ = await self.count_selected_as_of(selector)
        return found

    async def count_selected_as_of(self, selector: StoreSelector) -> tuple[int, int]:
        """The count and the change table's last seq: one snapshot (reads.py), or steps (scan.py)."""
        if scan.walks_a_status_index(selector):
            return await scan.count_of(self.count_in_steps(selector, scan.DEFAULT_STEP_JOBS))
        if counted.selector_answerable(selector):
            return await self._read(reads.kept_count_as_of(self._t, selector))
        return await self._read(reads.count_as_of(self._t, selector))

    async def pending_health(self, now_ms: int) -> list[PendingHealth]:
        return reads.health_from_rows(await self._read(reads.pending_health(self._t, now_ms)))

    async def pending_split(self, now_ms: int, names: Sequence[str], cap: int) -> list[PendingSplit]:
        wanted = list(dict.fromkeys(names))
        found = await self._read(reads.pending_split(self._t, now_ms, wanted, cap))
        return [PendingSplit(name, *found[name]) for name in wanted]

    # -- management (management.py) ---------------------------------------------------------------
    async def cancel(self, job_id: str, now_ms: int) -> Job | None:
        op = management.guarded_single(self._t, self._j, statements.CANCEL, (now_ms,), job_id, statements.CANCEL_GUARD)
        return await self._write(op, inline=True)

    async def retry(self, job_id: str, now_ms: int) -> tuple[Job, JobStatus] | None:
        return await self._write(management.retry_one(self._t, self._j, job_id, now_ms), inline=True)

    async def request_stop(self, job_id: str, owner: str, locked_at_ms: int, now_ms: int) -> Job | None:
        return await self._write(running.stop_requested(self._t, self._j, job_id, owner, locked_at_ms, now_ms))

    async def reschedule(self, job_id: str, run_at_ms: int, now_ms: int) -> Job | None:
        assignments, params = statements.RESCHEDULE, (run_at_ms, now_ms)
        op = management.guarded_single(self._t, self._j, assignments, params, job_id, statements.RESCHEDULE_GUARD)
        return await self._write(op, inline=True)

    async def delete(self, job_id: str) -> bool:
        journal = self._j
        return await self._write(lambda conn: journal.delete_where(conn, "id = ?", (job_id,)) > 0, inline=True)

    # -- bulk actions in bounded transactions (management.py) ---------------------------------------
    async def cancel_many(self, selector: StoreSelector, now_ms: int) -> int:
        chunk = management.cancel_chunk(self._t, self._j, now_ms)
        return await management.in_chunks(self._write, self._read, self._t, selector, chunk)

    async def retry_many(
        self, selector: StoreSelector, now_ms: int, spread_ms: int
    ) -> tuple[int, list[dict[str, str]]]:
        errors: list[dict[str, str]] = []
        chunk = management.retry_chunk(self._t, self._j, now_ms, spread_ms, errors)
        count = await management.in_chunks(self._write, self._read, self._t, selector, chunk)
        return count, errors

    async def delete_many(self, selector: StoreSelector) -> int:
        chunk = management.delete_chunk(self._j)
        return await management.in_chunks(self._write, self._read, self._t, selector, chunk)

    # -- fleet and queue control (fleet.py) -------------------------------------------------------
    async def upsert_instance(self, record: InstanceRecord) -> None:
        await self._write(fleet.upsert_instance(self._t, record))

    async def remove_instance(self, instance_id: str) -> None:
        await self._write(fleet.remove_instance(self._t, instance_id))

    async def list_instances(self) -> list[InstanceRecord]:
        return await self._read(fleet.list_instances(self._t))

    async def purge_instances(self, heartbeat_before_ms: int) -> int:
        return await self._write(fleet.purge_instances(self._t, heartbeat_before_ms))

    async def owner_holdings(self) -> list[OwnerHolding]:
        return await self._read(fleet.owner_holdings(self._t))

    async def owner_records(self, owner: str) -> OwnerRecords:
        return await self._read(fleet.owner_records(self._t, owner))

    async def release_unmoved_owner(self, owner: str, expected: OwnerRecords, now_ms: int) -> int | None:
        return await self._write(fleet.release_unmoved_owner(self._t, self._j, owner, expected, now_ms))

    async def set_paused(self, name: str, paused: bool, now_ms: int) -> bool:
        return await self._write(fleet.set_paused(self._t, name, paused, now_ms))

    async def paused_names(self) -> dict[str, int]:
        return await self._read(fleet.paused_names(self._t))

    async def add_outcome_counts(
        self, counts: dict[tuple[str, int], tuple[int, int]], batch: str | None = None
    ) -> None:
        if counts:  # one transaction: a failed write applied nothing, so ``batch`` is not needed
            await self._write(fleet.add_outcome_counts(self._t, counts))

    async def outcome_counts(self, since_minute: int, name: str | None = None) -> list[tuple[str, int, int, int]]:
        return await self._read(fleet.outcome_counts(self._t, since_minute, name))

    async def purge_outcome_counts(self, before_minute: int) -> int:
        return await self._write(fleet.purge_outcome_counts(self._t, before_minute))

    async def error_attempt_counts(
        self, keys: Sequence[str], since_minute: int
    ) -> tuple[dict[str, int], list[tuple[str, int, int]]]:
        return await self._read(fleet.error_attempt_counts(self._t, keys, since_minute))

    # -- change feed ------------------------------------------------------------------------------
    async def open_watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
        names: tuple[str, ...] | None = None,  # a hint (ports.Feed): every event here carries its name
    ) -> AsyncIterator[ChangeEvent]:
        if self._feed is None:
            raise ConnectionError(f"{self._describe()} is not open; call initialize() first")
        return await self._feed.open(resume_after, full_document=full_document, statuses=statuses)

    async def open_watch_rows(self, resume_after: Any = None) -> AsyncIterator[ChangeRows]:
        """Every change, a pull at a time as plain rows (``ChangeRows``; ``ports.RowFeed``)."""
        if self._feed is None:
            raise ConnectionError(f"{self._describe()} is not open; call initialize() first")
        return await self._feed.open_rows(resume_after)

    # -- used by tests and tools -----------------------------------------------------------------
    async def execute_write(self, op: Any) -> Any:
        """Run a raw write operation on the store's write thread (tests, migrations)."""
        return await self._write(op)

    async def execute_read(self, op: Any) -> Any:
        """Run a raw read (tests, tools) as one of job rows: over the inbox view when it has rows."""
        return await self._read(Jobs(op))


__all__ = ["SqliteStore", "begin_immediate"]
