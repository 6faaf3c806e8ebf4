"""The store interface: everything the scheduler asks of storage, shaped by the scheduler.

Each store owns its queries (SQL, MongoDB documents); the scheduler owns the semantics
(which transition, which guard, which event). Every method that changes a job applies its
guard atomically and reports what it actually wrote, so "no event for a transition that did
not happen" holds on every store. All instants are epoch milliseconds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from ..cursor import CursorAnchor
from ..job import ChangeEvent, CursorDirection, Job, JobSort, JobStatus, NewJob, QueueStats


@dataclass(frozen=True, slots=True)
class StoreSelector:
    """A bulk selector after the scheduler applied its guard: ``statuses`` is final."""

    name: str | None = None
    statuses: tuple[JobStatus, ...] | None = None  # None: any status
    created_before_ms: int | None = None
    created_after_ms: int | None = None


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


@dataclass(frozen=True, slots=True)
class StoreOpenOptions:
    collection_name: str = "monque_jobs"
    create_indexes: bool = True
    retention_index: bool = False
    #: Called on the store's event loop, once, when the store finds it can no longer be
    #: trusted (e.g. its SQLite file was deleted or replaced); ``Monque`` emits job:error.
    on_fatal: Callable[[Exception], None] | None = None


class JobStore(ABC):
    """One jobs collection. Instances are bound to the event loop that opened them."""

    #: The location with any password masked: safe for titles, logs and errors.
    display_url: str = ""
    #: Short kind name shown to people ("sqlite", "mongodb").
    kind: str = ""
    #: Opened read-only (SQLite ``mode=ro``): every write raises ConnectionError.
    read_only: bool = False

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

    # -- processing: claims and owned transitions --------------------------------------------
    @abstractmethod
    async def claim(self, name: str, owner: str, now_ms: int, limit: int, heartbeat_interval_ms: int) -> list[Job]:
        """Atomically take up to ``limit`` due pending jobs of ``name``, earliest nextRunAt first."""

    @abstractmethod
    async def complete(self, job_id: str, owner: str, now_ms: int, next_run_at_ms: int | None) -> Job | None:
        """Owned completion: ``next_run_at_ms`` None marks it completed, else pending again
        (recurring) with failCount 0. None when the job is no longer processing by ``owner``."""

    @abstractmethod
    async def fail(
        self, job_id: str, owner: str, now_ms: int, fail_count: int, reason: str, retry_at_ms: int | None
    ) -> Job | None:
        """Owned failure: ``retry_at_ms`` None marks it failed, else pending at that time."""

    @abstractmethod
    async def release(self, job_ids: Sequence[str], owner: str, now_ms: int) -> int:
        """Return owned processing jobs to pending (claims that landed during shutdown)."""

    @abstractmethod
    async def heartbeat(self, owner: str, now_ms: int) -> int:
        """Refresh lastHeartbeat and updatedAt of every job ``owner`` is processing."""

    @abstractmethod
    async def recover_stale(self, stale_before_ms: int, now_ms: int) -> int:
        """Return stale processing jobs to pending.

        A processing job is stale when its liveness instant, ``lastHeartbeat`` where the job
        has one and ``lockedAt`` otherwise, is before ``stale_before_ms``. Liveness comes
        from the heartbeat, never from ``lockedAt`` alone (ADR 0004), so a long job whose
        owner keeps heartbeating is never handed to a second worker.
        """

    @abstractmethod
    async def purge_finished(self, status: JobStatus, updated_before_ms: int) -> int:
        """Retention: delete ``status`` jobs last updated before the cutoff."""

    @abstractmethod
    async def has_live_claim(self, owner: str, heartbeat_after_ms: int) -> bool:
        """Whether a processing job is claimed by ``owner`` with a recent heartbeat."""

    @abstractmethod
    async def next_due_ms(self, names: Sequence[str]) -> int | None:
        """Earliest nextRunAt among pending jobs of these names (to arm a wake-up timer)."""

    # -- reads -------------------------------------------------------------------------------
    @abstractmethod
    async def get(self, job_id: str) -> Job | None: ...

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
    async def stats(self, name: str | None) -> QueueStats: ...

    @abstractmethod
    async def stats_by_name(self) -> dict[str, QueueStats]: ...

    @abstractmethod
    async def names(self) -> list[str]:
        """Distinct job names present in the collection."""

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
        ``statuses`` keeps only changes that left a job in one of them (deletes excepted);
        the processor uses it to hear about pending work without reading its own traffic.
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
