"""Reads for dashboards and consoles: single jobs, listings, keyset pages, statistics."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from ..cursor import CursorAnchor, decode_cursor, encode_cursor
from ..errorgroups import ErrorGroup, hour_window, normalize_message, with_attempt_counts
from ..errors import InvalidJobQueryError
from ..job import (
    BulkCount,
    CursorDirection,
    CursorPage,
    Job,
    JobListFilter,
    JobSelector,
    JobSort,
    JobStatus,
    QueueStats,
    QueueViewSummary,
    WorkerSummary,
)
from ..progress import DEFAULT_STEP_JOBS, CountProgress, PageProgress
from ..store import ports
from ..store.values import StepCount
from ..timeutil import now_ms
from ..validation import normalize_job_id
from .context import SchedulerContext
from .selectors import _ms, name_filter, to_store_filter, to_store_selector

MAX_QUERY_LIMIT = 1000
MAX_SKIP = 2**63 - 1  # what SQLite's OFFSET and MongoDB's skip (int64) can carry
STATS_CACHE_ENTRIES = 100


def _limit(value: object, default: int) -> int:
    limit = default if value is None else value
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_QUERY_LIMIT:
        raise InvalidJobQueryError(f"limit must be an integer between 1 and {MAX_QUERY_LIMIT}, got {value!r}")
    return limit


class TtlCache:
    """A small LRU of values with a time to live; concurrent misses share one load."""

    def __init__(self, ttl: float, capacity: int = STATS_CACHE_ENTRIES) -> None:
        self._ttl = ttl
        self._capacity = capacity
        self._entries: OrderedDict[Any, tuple[float, Any]] = OrderedDict()
        self._loading: dict[Any, asyncio.Future[Any]] = {}

    async def get(self, key: Any, load: Callable[[], Awaitable[Any]]) -> Any:
        if self._ttl <= 0:
            return await load()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > time.monotonic():
            self._entries.move_to_end(key)
            return entry[1]
        if key in self._loading:
            return await asyncio.shield(self._loading[key])
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._loading[key] = future
        try:
            value = await load()
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # mark retrieved: waiters (if any) re-raise it themselves
            raise
        finally:
            self._loading.pop(key, None)
        future.set_result(value)
        self._entries[key] = (time.monotonic() + self._ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        self._entries.clear()


def check_sort(sort: object) -> JobSort:
    """``sort`` as a JobSort (None: by id, ascending), or InvalidJobQueryError saying what to pass."""
    if sort is None:
        return JobSort()
    if not isinstance(sort, JobSort):
        raise InvalidJobQueryError(
            f"sort must be a JobSort(by=..., direction=...), got {type(sort).__name__}; "
            "for example JobSort('created_at', 'desc')"
        )
    if sort.by not in ("id", "created_at", "updated_at", "next_run_at", "locked_at") or sort.direction not in (
        "asc",
        "desc",
    ):
        raise InvalidJobQueryError(
            f"Unknown sort {sort.by!r} {sort.direction!r}; sort by id, created_at, updated_at, next_run_at or "
            "locked_at, asc or desc"
        )
    return sort


def check_sorted_listing(sort: JobSort, filter: JobListFilter | None) -> None:
    """A sort by ``locked_at`` (run time, issue 37) lists processing jobs only: other jobs hold
    no claim to sort by, and a keyset page cannot step over a missing value."""
    if sort.by != "locked_at":
        return
    if to_store_filter(filter).statuses != (JobStatus.PROCESSING,):
        raise InvalidJobQueryError(
            "A sort by locked_at (run time) lists processing jobs only: pass JobListFilter(status='processing')"
        )


def _cursor_page(
    rows: list[Job], size: int, direction: CursorDirection, sort: JobSort, anchor: CursorAnchor | None
) -> CursorPage:
    """The page of ``size`` jobs from up to ``size + 1`` rows read in traversal order."""
    has_more = len(rows) > size
    jobs = rows[:size]
    if direction == "backward":
        jobs.reverse()
    edge = (jobs[0] if direction == "backward" else jobs[-1]) if jobs else None
    page_cursor = None
    if edge is not None:
        value = None if sort.by == "id" else getattr(edge, f"{sort.by}_ms")
        page_cursor = encode_cursor(CursorAnchor(edge.id, value), direction, sort)
    forward = direction == "forward"
    return CursorPage(
        jobs=jobs,
        cursor=page_cursor,
        has_next_page=has_more if forward else anchor is not None,
        has_previous_page=anchor is not None if forward else has_more,
    )


def check_step(step: object) -> int:
    """A step size for the ``*_in_steps`` reads (None: the default), or InvalidJobQueryError."""
    if step is None:
        return DEFAULT_STEP_JOBS
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise InvalidJobQueryError(f"step must be a positive integer (jobs read per step), got {step!r}")
    return step


def count_progress(
    steps: AsyncGenerator[StepCount, None], bulk_count: Callable[[StepCount], BulkCount] | None = None
) -> AsyncIterator[CountProgress]:
    """The store's steps as ``CountProgress``; with ``bulk_count``, the last carries the
    ``BulkCount`` that function makes of it."""

    async def progress() -> AsyncIterator[CountProgress]:
        try:
            async for found in steps:
                bulk = None
                if found.done and bulk_count is not None:
                    bulk = bulk_count(found)
                yield CountProgress(dict(found.by_status), found.read, found.total, found.done, bulk)
        finally:
            await steps.aclose()  # stops reading now

    return progress()


class QueryService:
    """The read side of ``Monque``: lookups, listings, pages and cached stats, kept apart
    from the processing loop. (Not the console's ``monque_tui.console.query.JobQuery``, a view filter.)"""

    def __init__(
        self, ctx: SchedulerContext, store: ports.Reads, workers: Callable[[], dict[str, WorkerSummary]]
    ) -> None:
        self._ctx = ctx
        self._store = store
        self._workers = workers
        self.stats_cache = TtlCache(ctx.options.stats_cache_ttl)

    async def get_job(self, job_id: str) -> Job | None:
        key = normalize_job_id(job_id)
        return None if key is None else await self._store.get(key)

    async def get_jobs_by_id(self, job_ids: Iterable[Any]) -> dict[str, Job]:
        if isinstance(job_ids, (str, bytes)):
            raise InvalidJobQueryError(f"job_ids must be a collection of ids, not one id: {job_ids!r}")
        keys = [key for key in map(normalize_job_id, job_ids) if key is not None]
        return await self._store.get_many(keys) if keys else {}

    async def get_jobs(self, name: str | None = None, status: Any = None, limit: int = 100, skip: int = 0) -> list[Job]:
        if not isinstance(skip, int) or isinstance(skip, bool) or not 0 <= skip <= MAX_SKIP:
            raise InvalidJobQueryError(f"skip must be an integer from 0 to {MAX_SKIP} (2**63-1), got {skip!r}")
        selector = to_store_selector(JobSelector(name=name, status=status))
        return await self._store.find(selector, _limit(limit, 100), skip)

    async def get_jobs_with_cursor(
        self,
        cursor: str | None = None,
        limit: int = 50,
        direction: CursorDirection = "forward",
        filter: JobListFilter | None = None,
        sort: JobSort | None = None,
        include_data: bool = True,
    ) -> CursorPage:
        sort = check_sort(sort)
        check_sorted_listing(sort, filter)
        if direction not in ("forward", "backward"):
            raise InvalidJobQueryError(f"direction must be 'forward' or 'backward', got {direction!r}")
        if not isinstance(include_data, bool):  # a truthy "no" must not mean yes
            raise InvalidJobQueryError(f"include_data must be True or False, got {include_data!r}")
        size = _limit(limit, 50)
        anchor = decode_cursor(cursor, sort) if cursor else None
        rows = await self._store.page(to_store_filter(filter), sort, direction, anchor, size + 1, include_data)
        return _cursor_page(rows, size, direction, sort, anchor)

    def get_jobs_in_steps(
        self,
        cursor: str | None = None,
        limit: int = 50,
        direction: CursorDirection = "forward",
        filter: JobListFilter | None = None,
        sort: JobSort | None = None,
        include_data: bool = True,
        step: int | None = None,
    ) -> AsyncIterator[PageProgress]:
        """``get_jobs_with_cursor`` read in steps (ADR 0008): validated now, read as iterated."""
        sort = check_sort(sort)
        check_sorted_listing(sort, filter)
        if direction not in ("forward", "backward"):
            raise InvalidJobQueryError(f"direction must be 'forward' or 'backward', got {direction!r}")
        if not isinstance(include_data, bool):
            raise InvalidJobQueryError(f"include_data must be True or False, got {include_data!r}")
        size = _limit(limit, 50)
        anchor = decode_cursor(cursor, sort) if cursor else None
        store_filter = to_store_filter(filter)
        steps = self._store.page_in_steps(
            store_filter, sort, direction, anchor, size + 1, check_step(step), include_data
        )

        async def pages() -> AsyncIterator[PageProgress]:
            try:
                async for found in steps:
                    jobs = found.rows[:size]
                    if direction == "backward":
                        jobs.reverse()
                    page = _cursor_page(found.rows, size, direction, sort, anchor) if found.done else None
                    yield PageProgress(jobs, found.read, found.total, found.done, page)
            finally:
                await steps.aclose()  # stops reading now

        return pages()

    def count_jobs_in_steps(
        self, filter: JobListFilter | None = None, step: int | None = None
    ) -> AsyncIterator[CountProgress]:
        """``count_jobs`` by status, read in steps (ADR 0008): validated now, read as iterated."""
        return count_progress(self._store.count_in_steps(to_store_filter(filter), check_step(step)))

    async def count_jobs(self, filter: JobListFilter | None = None) -> int:
        return await self._store.count(to_store_filter(filter))

    async def get_queue_stats(self, name: str | None = None) -> QueueStats:
        name = name_filter(name)  # a non-empty string that sqlite3 / BSON can carry, or None
        return await self.stats_cache.get(("stats", name), lambda: self._store.stats(name))  # type: ignore[no-any-return]

    async def get_queue_view_summaries(self, name: str | None = None) -> list[QueueViewSummary]:
        only = name_filter(name)
        by_name: dict[str, QueueStats] = await self.stats_cache.get(("by-name",), self._store.stats_by_name)
        workers = self._workers()
        names = sorted(set(by_name) | set(workers))
        if only is not None:  # as upstream's getQueueViewSummaries({name})
            names = [n for n in names if n == only]
        return [
            QueueViewSummary(
                name=name,
                has_persisted_jobs=name in by_name,
                has_registered_worker=name in workers,
                stats=by_name.get(name, QueueStats()),
                worker=workers.get(name),
            )
            for name in names
        ]

    async def error_groups(self, name: str | None = None, since: Any = None, limit: int = 200) -> list[ErrorGroup]:
        """Failed and retrying jobs grouped by job name, exception type and message pattern,
        most recently seen first (see errorgroups.py for how the key is computed and stored).

        ``since`` (an aware datetime) keeps members that last failed at or after it. At most
        ``limit`` groups are returned, each with the message of one member as its sample.
        """
        name = name_filter(name)
        since_ms = _ms(since, "since")
        size = _limit(limit, 200)
        now = now_ms()
        rows = await self._store.error_groups(name, since_ms, now)
        rows.sort(key=lambda row: (-row.last_seen_ms, row.key))
        rows = rows[:size]
        hour_start = hour_window(now)
        first, counted = await self._store.error_attempt_counts([row.key for row in rows], hour_start // 60_000)
        minutes: dict[str, dict[int, int]] = {}
        for key, minute, failed in counted:
            minutes.setdefault(key, {})[minute] = failed
        groups: list[ErrorGroup] = []
        for found in rows:
            row = with_attempt_counts(found, first.get(found.key), minutes.get(found.key, {}), hour_start)
            sample = await self._store.error_group_sample(row.key)
            groups.append(
                ErrorGroup(
                    key=row.key,
                    name=row.name,
                    error_type=row.error_type,
                    pattern=normalize_message(sample),
                    sample_message=sample,
                    count=row.count,
                    retrying=row.retrying,
                    first_seen_ms=row.first_seen_ms,
                    last_seen_ms=row.last_seen_ms,
                    per_minute=row.per_minute,
                )
            )
        return groups
