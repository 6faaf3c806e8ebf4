"""``Monque.wait``: the job once it is final, learnt from the change feed (issue 38).

The feed is opened first and the job read second, so a change committed between the two is
never missed: either the read sees it, or the feed delivers it. Then each change of this
job is looked at as it comes (a change carries the job's new status, so only a final one
costs a read); nothing is polled while the feed is live. Where the deployment has no feed
at all (a standalone MongoDB server), the job is re-read at a growing interval (50 ms up
to 1 s) instead, as the processor's own fallback polls.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable

from ..errors import (
    ChangeFeedUnsupportedError,
    ConnectionError,
    InvalidJobQueryError,
    JobNotFoundError,
    WaitTimeoutError,
)
from ..job import ChangeEvent, Job, JobStatus
from ..store import ports
from ..validation import normalize_job_id

#: A job in one of these states changes no more by itself (only an operator's retry or a
#: delete moves it): what ``wait`` waits for.
FINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED})
#: Re-read intervals where there is no change feed (seconds): start small, grow to the cap.
POLL_FIRST, POLL_MAX = 0.05, 1.0


def checked_timeout(timeout: object) -> float | None:
    """``timeout`` as seconds (None: wait as long as it takes), or a one-line error."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise InvalidJobQueryError(f"wait() timeout must be a positive number of seconds or None, got {timeout!r}")
    return float(timeout)


async def wait_for_final(
    reads: ports.Reads,
    feed: ports.Feed,
    job_id: object,
    timeout: float | None,
    is_open: Callable[[], bool] = lambda: True,
) -> Job:
    """The job with ``job_id`` once completed, failed or cancelled (at once if it is already).

    ``JobNotFoundError`` when no job has that id, or it is deleted while waited for;
    ``WaitTimeoutError`` (a ``TimeoutError``) when ``timeout`` seconds pass first;
    ``ConnectionError`` when the client is closed meanwhile (``is_open()`` turns False).
    """
    seconds = checked_timeout(timeout)
    canonical = normalize_job_id(job_id)
    if canonical is None:
        raise JobNotFoundError(
            str(job_id), f"wait(): {job_id!r} is not a job id (24 hexadecimal digits, as Job.id holds)"
        )
    seen: list[Job] = []
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await _wait(reads, feed, canonical, seen, is_open)
    except TimeoutError:
        if not scope.expired():
            raise  # the store's own time-out, not ours
        raise WaitTimeoutError(canonical, seconds or 0.0, seen[-1] if seen else None) from None


async def _wait(reads: ports.Reads, feed: ports.Feed, job_id: str, seen: list[Job], is_open: Callable[[], bool]) -> Job:
    """Watch, read, follow the feed; when the feed breaks after it opened (a MongoDB
    failover, a dropped connection), open it again and read again (the read covers what the
    gap hid), after a pause growing as the poll's. What fails to open, or to read, raises:
    then the store itself is unreachable, and the caller hears it."""
    delay = POLL_FIRST
    while True:
        try:
            broke = await _watch_once(reads, feed, job_id, seen, is_open)
        except ConnectionError as error:
            if not is_open():  # the store is closing under it: a read or the open failed for that
                raise _closed(job_id) from error
            raise
        if isinstance(broke, Job):
            return broke
        await asyncio.sleep(delay)
        delay = min(delay * 2, POLL_MAX)
        if not is_open():
            raise _closed(job_id) from broke


async def _watch_once(
    reads: ports.Reads, feed: ports.Feed, job_id: str, seen: list[Job], is_open: Callable[[], bool]
) -> Job | ConnectionError:
    """The final job, or the error that broke the feed once it was open (to open it again)."""
    try:
        changes: AsyncIterator[ChangeEvent] | None = await feed.open_watch(None, full_document=False)
    except ChangeFeedUnsupportedError:
        changes = None
    try:
        job = await _read(reads, job_id, seen, "names no stored job")
        if job.status in FINAL_STATUSES:
            return job
        if job.repeat_interval is not None:
            # Each run returns it to pending: it never ends by itself, so the wait would last
            # until its timeout (or for ever) and then blame a missing worker.
            raise InvalidJobQueryError(
                f"wait(): job {job_id} is recurring ({job.repeat_interval!r}) and never reaches a final state "
                "by itself; read its last run's result with get_job(), or wait for a one-off job"
            )
        if changes is None:
            return await _poll(reads, job_id, seen)
        try:
            async for change in changes:
                if change.job_id != job_id:
                    continue
                if change.operation == "delete":
                    raise JobNotFoundError(job_id, f"Job {job_id} was deleted while wait() waited for it")
                if change.status is not None and change.status not in FINAL_STATUSES:
                    continue  # still on its way: nothing to read
                job = await _read(reads, job_id, seen, "was deleted while wait() waited for it")
                if job.status in FINAL_STATUSES:
                    return job
        except ConnectionError as error:
            return error
        # The feed ends when its store closes.
        if not is_open():
            raise _closed(job_id)
        return ConnectionError(f"The change feed ended while wait() waited for job {job_id}")
    finally:
        close = getattr(changes, "aclose", None)
        if close is not None:
            await close()


def _closed(job_id: str) -> ConnectionError:
    return ConnectionError(f"wait() for job {job_id} ended: the client was closed (close() was called) while it waited")


async def _read(reads: ports.Reads, job_id: str, seen: list[Job], missing: str) -> Job:
    job = await reads.get(job_id)
    if job is None:
        raise JobNotFoundError(job_id, f"Job {job_id} {missing}")
    seen.append(job)
    return job


async def _poll(reads: ports.Reads, job_id: str, seen: list[Job]) -> Job:
    delay = POLL_FIRST
    while True:
        await asyncio.sleep(delay)
        delay = min(delay * 2, POLL_MAX)
        job = await _read(reads, job_id, seen, "was deleted while wait() waited for it")
        if job.status in FINAL_STATUSES:
            return job


__all__ = ["FINAL_STATUSES", "checked_timeout", "wait_for_final"]
