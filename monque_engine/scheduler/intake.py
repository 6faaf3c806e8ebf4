"""Enqueue, schedule and batch intake: validation happens here, before any write."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..errors import InvalidJobQueryError, MonqueError
from ..ids import new_object_id, new_object_ids
from ..import_check import check_imported
from ..job import Job, JobStatus, NewJob
from ..store import ports
from ..timeouts import timeout_ms, timeout_problem
from ..timeutil import datetime_to_ms, in_range, now_ms, timedelta_ms
from ..validation import (
    KNOWN_NAMES,
    encode_payload_as_stored,
    validate_job_name,
    validate_unique_key,
)
from .context import SchedulerContext


def run_at_ms(run_at: datetime | timedelta | None, now: int) -> int:
    """The instant ``run_at`` names, refused when no store could hold it or read it back."""
    if run_at is None:
        return now
    if isinstance(run_at, timedelta):
        when = now + timedelta_ms(run_at)
    elif isinstance(run_at, datetime):
        if run_at.tzinfo is None or run_at.utcoffset() is None:  # Python's test for naive
            raise InvalidJobQueryError(
                "run_at must be timezone-aware (for example datetime.now(UTC) + timedelta(minutes=5)) "
                "or a timedelta from now"
            )
        when = datetime_to_ms(run_at)
    else:
        raise InvalidJobQueryError(f"run_at must be a datetime or timedelta, got {type(run_at).__name__}")
    if not in_range(when):
        raise InvalidJobQueryError(
            f"run_at {run_at!r} is out of range: it must fall between the years 1 and 9999 (UTC)"
        )
    return when


def job_timeout_ms(timeout: float | None, where: str = "timeout") -> int | None:
    """A job's own time limit (seconds) as stored (ms); None for none. Refused with a clear
    error when it is not a limit (≤ 0, NaN, infinite, over 30 days): see timeouts.py."""
    if timeout is None:
        return None
    problem = timeout_problem(timeout)
    if problem is not None:
        raise InvalidJobQueryError(f"{where} {problem}")
    return timeout_ms(timeout)


#: Items validated per chunk handed to the store (which inserts one while the next is built).
BUILD_CHUNK = 200
#: The first chunk is smaller, so the write thread starts inserting sooner: until it has a
#: chunk, the two threads cannot overlap.
FIRST_CHUNK = 50


def chunk_bounds(count: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each chunk of a batch of ``count`` items."""
    if count <= FIRST_CHUNK:
        return [(0, count)]
    return [(0, FIRST_CHUNK)] + [
        (start, min(count, start + BUILD_CHUNK)) for start in range(FIRST_CHUNK, count, BUILD_CHUNK)
    ]


_ITEM_KEYS = frozenset({"name", "data", "run_at", "unique_key", "timeout"})


class JobIntake:
    def __init__(self, ctx: SchedulerContext, store: ports.Intake) -> None:
        self._ctx = ctx
        self._store = store

    def build(
        self,
        name: str,
        data: Any,
        run_at: datetime | timedelta | None = None,
        unique_key: str | None = None,
        repeat_interval: str | None = None,
        now: int | None = None,
        timeout: float | None = None,
    ) -> NewJob:
        validate_job_name(name)
        if unique_key is not None:
            validate_unique_key(unique_key)
        limit = job_timeout_ms(timeout)
        created = now_ms() if now is None else now
        data_json, data = encode_payload_as_stored(data, self._ctx.options.max_payload_size)
        return NewJob(
            id=new_object_id(),
            name=name,
            data=data,
            data_json=data_json,
            next_run_at_ms=run_at_ms(run_at, created),
            created_at_ms=created,
            repeat_interval=repeat_interval,
            unique_key=unique_key,
            timeout_ms=limit,
        )

    def _woken(self, job: Job) -> Job:
        if job.status is JobStatus.PENDING:
            self._ctx.wake_at(job.name, job.next_run_at_ms)
        return job

    async def enqueue(
        self,
        name: str,
        data: Any,
        run_at: datetime | timedelta | None = None,
        unique_key: str | None = None,
        timeout: float | None = None,
    ) -> Job:
        return self._woken(await self._store.insert(self.build(name, data, run_at, unique_key, timeout=timeout)))

    async def schedule(
        self,
        cron: str,
        name: str,
        data: Any,
        unique_key: str | None = None,
        tz: str | None = None,
        timeout: float | None = None,
    ) -> Job:
        from ..cron import build_repeat_interval, next_run_ms  # here: no launch but a schedule's needs cron

        repeat_interval = build_repeat_interval(cron, tz)
        now = now_ms()
        job = self.build(name, data, None, unique_key, repeat_interval=repeat_interval, now=now, timeout=timeout)
        job.next_run_at_ms = next_run_ms(repeat_interval, now)
        return self._woken(await self._store.insert(job))

    async def enqueue_many(self, items: Iterable[Mapping[str, Any]]) -> list[Job]:
        if not isinstance(items, list | tuple):
            if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
                raise InvalidJobQueryError(
                    "enqueue_many takes a list (or other iterable) of mappings with name and data, "
                    f"got {type(items).__name__}"
                )
            items = list(items)
        if not items:
            return []
        # Built in chunks that the store may insert while the next ones are validated; a bad
        # item anywhere still leaves nothing stored (the store rolls the insert back).
        now = now_ms()
        stored = await self._store.insert_chunks(
            self.build_many(items, start, stop, now) for start, stop in chunk_bounds(len(items))
        )
        # One wake-up per name (its earliest due time), not one per job: wake_at keeps only
        # the earliest per name anyway, and a batch of 1000 jobs of one name is the norm.
        earliest: dict[str, int] = {}
        for job in stored:
            if job.status is JobStatus.PENDING:
                due = earliest.get(job.name)
                if due is None or job.next_run_at_ms < due:
                    earliest[job.name] = job.next_run_at_ms
        for name, due in earliest.items():
            self._ctx.wake_at(name, due)
        return stored

    async def import_jobs(self, jobs: Iterable[Job]) -> int:
        """Check every field of each job as intake would (``import_check``), then store them
        all as they are (``ports.Intake.import_jobs``); a pending one wakes its workers as an
        enqueue does."""
        if isinstance(jobs, Job) or not isinstance(jobs, Iterable):
            raise InvalidJobQueryError(f"import_jobs takes an iterable of Job, got {type(jobs).__name__}")
        batch = list(jobs)
        for job in batch:
            if not isinstance(job, Job):
                raise InvalidJobQueryError(f"import_jobs takes Job objects, got {type(job).__name__}")
        check_imported(batch, self._ctx.options.max_payload_size)
        stored = await self._store.import_jobs(batch) if batch else 0
        for job in batch:
            self._woken(job)
        return stored

    def build_many(
        self, items: Sequence[Mapping[str, Any]], start: int = 0, stop: int | None = None, now: int | None = None
    ) -> list[NewJob]:
        """Validate and encode every item before anything is written (all or none).

        The same checks as :meth:`build`, with what does not change per item hoisted out of
        the loop: one clock read, ids in one go, a dict's keys checked as a set view.
        Builds ``items[start:stop]``; errors name the item's index in ``items``.
        """
        if now is None:
            now = now_ms()
        part = items[start:stop]
        max_size = self._ctx.options.max_payload_size
        jobs: list[NewJob] = []
        append = jobs.append
        allowed = _ITEM_KEYS
        known_names = KNOWN_NAMES
        for index, (job_id, item) in enumerate(zip(new_object_ids(len(part)), part, strict=True), start):
            if type(item) is not dict and not isinstance(item, Mapping):
                raise InvalidJobQueryError(f"enqueue_many item {index} must be a mapping with name and data")
            if not item.keys() <= allowed or "name" not in item:
                unknown = set(item) - allowed
                raise InvalidJobQueryError(
                    f"enqueue_many item {index} must have keys name, data and optionally run_at, unique_key, timeout"
                    + (f" (unknown: {', '.join(sorted(map(str, unknown)))})" if unknown else "")
                )
            try:
                name = item["name"]
                if type(name) is not str or name not in known_names:  # one call per new name
                    validate_job_name(name)
                if len(item) == 2 and "data" in item:  # name and data only: no run_at, no unique key
                    data_json, data = encode_payload_as_stored(item["data"], max_size)
                    append(NewJob(job_id, name, data, data_json, now, now))
                    continue
                unique_key = item.get("unique_key")
                if unique_key is not None:
                    validate_unique_key(unique_key)
                data_json, data = encode_payload_as_stored(item.get("data"), max_size)
                run_at = item.get("run_at")
                due = now if run_at is None else run_at_ms(run_at, now)
                limit = job_timeout_ms(item.get("timeout"), "timeout")
                append(NewJob(job_id, name, data, data_json, due, now, None, unique_key, limit))
            except MonqueError as error:
                _name_the_item(error, index)
                raise
        return jobs


def _name_the_item(error: MonqueError, index: int) -> None:
    """Say which item of an ``enqueue_many`` batch is bad: in a batch of 1,000, "payload
    contains NaN" left the caller to search for it. Prefixes the message in place (the
    error's class and fields stay)."""
    if error.args and isinstance(error.args[0], str):
        error.args = (f"enqueue_many item {index}: {error.args[0]}", *error.args[1:])
