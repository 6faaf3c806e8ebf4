"""Owned one-off completions, batched: every completion a worker queues in one loop turn is
written by one guarded statement per owner, and a claim in that turn carries them into its
own transaction (one commit for a worker's finished jobs and the claim that refills their
slots).

Why (ADR 0001): at concurrency 5 the thread hop was most of a completion's round trip, so a
small flush runs inline on the loop when the writer is idle, and a wide one on the write
thread. The batch answers each completion with the stored job without reading it back: it
remembers the jobs this store claimed (``claimed``) until their outcome is written.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
from collections.abc import Callable

from ...attempts import AppendedHistory
from ...errors import ConnectionError
from ...job import Job, JobStatus
from . import statements
from .journal import Changes, Journal
from .runner import MISS, Miss, WriteRunner
from .schema import Tables
from .sqlerrors import wrap_error

#: Completion flushes of at most this many jobs may run inline (one UPDATE of that many
#: ids and their feed rows: ~0.1-1 ms on the loop); wider ones go to the write thread.
INLINE_COMPLETE_MAX = 64
#: Jobs per guarded completion statement.
COMPLETE_CHUNK = 500

#: A queued completion: the claimed job, its owner, when it completed, and who waits for it.
Item = tuple[Job, str, int, asyncio.Future[Job | None]]


class Completions:
    """The completions queued in this loop turn, and the jobs this store claimed that have
    no written outcome yet. The store owns one; ``attach`` at open, ``close`` at close."""

    def __init__(self, describe: Callable[[], str]) -> None:
        self._describe = describe
        #: Jobs this store claimed and has not yet seen released: lets a batch of owned
        #: completions return the stored job without reading each row back (``completed``).
        self.claimed: dict[str, Job] = {}
        self.queued: collections.deque[Item] = collections.deque()
        self.flush_queued = False
        self._writer: WriteRunner | None = None
        self._tables: Tables | None = None
        self._journal: Journal | None = None

    def attach(self, writer: WriteRunner, tables: Tables, journal: Journal) -> None:
        self._writer, self._tables, self._journal = writer, tables, journal

    def close(self) -> None:
        """The store closes: forget the claims, and fail every completion still queued."""
        self._writer = None
        self.claimed.clear()
        self.flush_queued = False
        while self.queued:  # nothing will flush these any more
            *_, waiting = self.queued.popleft()
            if not waiting.done():
                waiting.set_exception(
                    ConnectionError(f"{self._describe()} was closed before the completion was written")
                )

    def queue(
        self, loop: asyncio.AbstractEventLoop, job_id: str, owner: str, now_ms: int
    ) -> asyncio.Future[Job | None] | None:
        """Queue the owned one-off completion of a job this store claimed (None for any other:
        the store writes that one alone); the future settles with this job's outcome.

        Owned one-off completions are coalesced: each caller queues its job, and one flush
        completes everything queued in that turn of the loop in a single guarded statement:
        inline on the loop thread when the writer is idle and the flush is small (no thread
        hop: at concurrency 5 the hop was most of a round trip), else on the write thread."""
        claimed = self.claimed.pop(job_id, None)
        if claimed is None:
            return None
        future: asyncio.Future[Job | None] = loop.create_future()
        self.queued.append((claimed, owner, now_ms, future))
        if not self.flush_queued:
            self.flush_queued = True
            loop.call_soon(self.flush)
        return future

    def flush(self) -> None:
        """Take every queued completion and write it (called once per loop turn at most)."""
        self.flush_queued = False
        items = self._take()
        if items:
            self.write(items)

    def _take(self) -> list[Item]:
        items = list(self.queued)
        self.queued.clear()
        return items

    def write(self, items: list[Item], inline: bool = True) -> None:
        runner = self._writer
        if runner is None:
            hand_out(items, None, ConnectionError(f"{self._describe()} was closed before the completion was written"))
            return

        def flush_op(conn: sqlite3.Connection) -> list[Job | None]:
            return self.complete_items(conn, items)  # same items if the runner re-runs it alone

        if inline and len(items) <= INLINE_COMPLETE_MAX:
            try:
                result = runner.run_inline_now(flush_op)
            except BaseException as error:  # noqa: BLE001 - each waiter gets the flush's error
                hand_out(items, None, wrap_error(error, self._describe))
                return
            if result is not MISS:
                hand_out(items, result, None)
                return
        try:
            flush = runner.submit(flush_op)
        except BaseException as error:  # noqa: BLE001 - closed between the check and the submit
            hand_out(items, None, error)
            return
        flush.add_done_callback(lambda done: settle(done, items))

    async def claim_with(
        self, claim_op: Callable[[sqlite3.Connection, Changes], list[Job]], inline: bool
    ) -> list[Job] | Miss:
        """Run a claim in the same transaction as the completions queued this turn (one
        commit instead of two: a worker's finished jobs and the claim that refills their
        slots meet here). Inline when both are small and the writer is idle, else as one
        operation on the write thread. MISS when nothing is queued (or, inline, when the
        writer is busy); the completions then go their usual way."""
        runner = self._writer
        if runner is None or not self.queued:
            return MISS
        items = self._take()  # the queued flush finds nothing left and returns
        journal = self._journal
        assert journal is not None

        def both(conn: sqlite3.Connection) -> tuple[list[Job | None], list[Job]]:
            batch = Changes()  # completions' rows, then the claim's: commit order
            completed = self.complete_items(conn, items, batch)
            jobs = claim_op(conn, batch)
            journal.write(conn, batch)
            return completed, jobs

        if inline and len(items) <= INLINE_COMPLETE_MAX:
            try:
                outcome = runner.run_inline_now(both)
            except BaseException:  # noqa: BLE001 - rolled back: write each the usual way instead
                outcome = MISS
            if outcome is MISS:
                self.write(items, inline=False)
                return MISS
            completed, jobs = outcome
            hand_out(items, completed, None)
            return jobs
        try:
            combined = runner.submit(both)
        except BaseException as error:  # closed: every waiter hears it
            hand_out(items, None, error)
            raise
        # The completions are settled by the operation's own outcome, even when the claim's
        # caller is cancelled while it waits (shutdown): hence the callback and the shield.
        combined.add_done_callback(lambda done: self._deliver_combined(done, items))
        _, jobs = await asyncio.shield(combined)
        return jobs

    def _deliver_combined(self, done: asyncio.Future[tuple[list[Job | None], list[Job]]], items: list[Item]) -> None:
        if done.cancelled():
            hand_out(items, None, ConnectionError(f"{self._describe()}: the completion write was abandoned"))
        elif done.exception() is not None:
            # Rolled back with the claim (the runner already re-ran it alone): the completions
            # get their own transaction, so a claim's error never fails them.
            self.write(items, inline=False)
        else:
            completed_jobs, _claimed = done.result()
            hand_out(items, completed_jobs, None)

    def complete_items(
        self, conn: sqlite3.Connection, items: list[Item], batch: Changes | None = None
    ) -> list[Job | None]:
        """Complete owned one-off jobs, one guarded UPDATE per owner and COMPLETE_CHUNK jobs.
        Their changes are journaled here, or added to ``batch`` for the caller to write."""
        t, journal = self._tables, self._journal
        if t is None or journal is None:
            raise ConnectionError(f"{self._describe()} is not open; call initialize() first")
        results: list[Job | None] = []
        for start in range(0, len(items), COMPLETE_CHUNK):
            chunk = items[start : start + COMPLETE_CHUNK]
            now = max(at for _, _, at, _ in chunk)
            done: set[str] = set()
            record, record_params = statements.completed_one_off(now)
            for owner in {by for _, by, _, _ in chunk}:
                ids = [job.id for job, by, _, _ in chunk if by == owner]
                sql = statements.complete_owned(t, record, len(ids))
                done.update(job_id for (job_id,) in conn.execute(sql, (now, *record_params, *ids, owner)))
            changes = Changes() if batch is None else batch
            entries = changes.entries
            per_name: dict[str, list[int]] = {}  # jobs and summed durations: one count move per name
            for job, _, _, _ in chunk:
                if job.id in done:
                    entries.append(("update", job.id, job.name, "completed", job.next_run_at_ms))
                    moved = per_name.get(job.name)
                    if moved is None:
                        moved = per_name[job.name] = [0, 0]
                    moved[0] += 1
                    moved[1] += now - job.created_at_ms
                    results.append(completed(job, now))
                else:
                    results.append(None)
            for name, (jobs, duration) in per_name.items():
                changes.move(name, "processing", "completed", duration, jobs=jobs)
            if batch is None:
                journal.write(conn, changes)
        return results


def settle(flush: asyncio.Future[list[Job | None]], items: list[Item]) -> None:
    """Hand each waiter of a completion flush its own outcome (or the flush's error)."""
    if flush.cancelled():
        hand_out(items, [None] * len(items), None)
    elif flush.exception() is not None:
        hand_out(items, None, flush.exception())
    else:
        hand_out(items, flush.result(), None)


def hand_out(
    items: list[Item],
    results: list[Job | None] | None,
    error: BaseException | None,
) -> None:
    for index, (_, _, _, future) in enumerate(items):
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            assert results is not None
            future.set_result(results[index])


def completed(job: Job, now_ms: int) -> Job:
    """The row an owned one-off completion leaves behind.

    Exact, not a guess: the guard (still processing, still ours) held, so nothing but our
    own claim and heartbeats touched the row since the claim returned it; payloads never
    change, and the completion overwrites every field heartbeats wrote.
    """
    return Job(
        job.id,
        job.name,
        job.data,
        JobStatus.COMPLETED,
        job.next_run_at_ms,
        job.created_at_ms,
        now_ms,
        job.fail_count,
        None,
        None,
        None,
        job.heartbeat_interval_ms,
        None,
        job.repeat_interval,
        job.unique_key,
        AppendedHistory(job._attempts, job.fail_count + 1, job.claimed_by, job.locked_at_ms, now_ms),
    )
