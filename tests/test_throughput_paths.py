"""The throughput fast paths keep the semantics of the plain ones (issue 14).

Each fast path here (ids minted in one go, multi-row inserts, inserting chunk k while
chunk k+1 is validated, one wake-up per name) is checked on a real SQLite file against
what the slow path promised: every job stored once, in order, all or none.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sqlite3

import pytest

from monque_engine import InvalidJobIdentifierError, Monque
from monque_engine.ids import new_object_id, new_object_ids
from monque_engine.scheduler.intake import BUILD_CHUNK
from monque_engine.store.sqlite.intake import MULTI_ROW
from monque_engine.timeutil import now_ms


def test_new_object_ids_are_unique_ordered_and_continue_the_single_counter():
    before = new_object_id()
    many = new_object_ids(5000)
    after = new_object_id()
    assert len(set(many)) == 5000
    assert all(len(i) == 24 and int(i, 16) >= 0 for i in many)
    counters = [int(i[-6:], 16) for i in [before, *many, after]]
    assert all((b - a) & 0xFFFFFF == 1 for a, b in itertools.pairwise(counters))
    assert new_object_ids(0) == []


async def test_enqueue_many_across_chunks_and_row_groups_stores_every_job_once_in_order(tmp_path):
    count = 3 * BUILD_CHUNK + MULTI_ROW // 2 + 7  # several chunks, a partial row group at the end
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "bulk", "data": {"i": i}} for i in range(count)])
        assert [j.data["i"] for j in jobs] == list(range(count))
        assert len({j.id for j in jobs}) == count
        assert len({j.created_at_ms for j in jobs}) == 1  # one clock read for the whole call
        stored = await m.get_jobs(name="bulk", limit=count + 1)
        assert sorted(j.id for j in stored) == sorted(j.id for j in jobs)
        by_id = {j.id: j for j in stored}
        assert all(by_id[j.id] == j for j in jobs)
    finally:
        await m.close()
    conn = sqlite3.connect(tmp_path / "jobs.db")
    try:
        feed = conn.execute("SELECT job_id FROM monque_jobs_changes WHERE op = 'insert' ORDER BY seq").fetchall()
    finally:
        conn.close()
    assert [row[0] for row in feed] == [j.id for j in jobs]  # one feed row per job, in order


@pytest.mark.parametrize("bad_at", [0, BUILD_CHUNK + 3, 3 * BUILD_CHUNK + 1])
async def test_enqueue_many_bad_item_in_a_later_chunk_leaves_nothing_stored(tmp_path, bad_at):
    """Earlier chunks were already inserted in the transaction when the bad one is built."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        items = [{"name": "bulk", "data": i} for i in range(3 * BUILD_CHUNK + 10)]
        items[bad_at] = {"name": "bad name", "data": 0}
        with pytest.raises(InvalidJobIdentifierError):
            await m.enqueue_many(items)
        assert await m.get_jobs(limit=10) == []
        # the store is usable afterwards: the write thread was not left waiting
        ok = await m.enqueue_many([{"name": "bulk", "data": 1}])
        assert [j.id for j in await m.get_jobs()] == [ok[0].id]
    finally:
        await m.close()


async def test_enqueue_many_with_unique_keys_in_a_later_chunk_dedups(tmp_path):
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        items = [{"name": "bulk", "data": i} for i in range(BUILD_CHUNK + 5)]
        items.append({"name": "bulk", "data": "a", "unique_key": "k"})
        items.append({"name": "bulk", "data": "b", "unique_key": "k"})
        jobs = await m.enqueue_many(items)
        assert jobs[-1].id == jobs[-2].id and jobs[-1].data == "a"
        assert len(await m.get_jobs(name="bulk", limit=1000)) == BUILD_CHUNK + 6
    finally:
        await m.close()


async def test_enqueue_many_wakes_each_name_once_at_its_earliest_due_time(tmp_path):
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    calls: list[tuple[str, int]] = []
    m._ctx.wake_at = lambda name, due: calls.append((name, due))  # observing the hook
    try:
        jobs = await m.enqueue_many([{"name": n, "data": i} for i in range(300) for n in ("a", "b")])
        assert sorted(calls) == sorted({(j.name, j.next_run_at_ms) for j in jobs})
        assert len(calls) == 2
    finally:
        await m.close()


async def test_in_process_watcher_sees_the_last_of_a_burst_of_commits_with_a_slow_poll(tmp_path):
    """Wake-ups for this process's commits are coalesced (at most one per 2 ms); the last
    commit of a burst must still wake the watcher, even when the cross-process poll that
    would also notice it is a minute away."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db?feed_interval_ms=60000")
    await m.initialize()
    try:
        stream = await m.open_watch()
        jobs = [await m.enqueue("burst", i) for i in range(200)]
        seen = []
        async with asyncio.timeout(10):
            async for event in stream:
                seen.append(event.job_id)
                if len(seen) == len(jobs):
                    break
        assert seen == [j.id for j in jobs]
    finally:
        await m.close()


class _CommitCounter:
    def __init__(self) -> None:
        self.commits = 0

    def __call__(self, statement: str) -> None:
        if statement.strip().upper() == "COMMIT":
            self.commits += 1


async def test_low_concurrency_drain_commits_a_claim_with_the_completions_it_refills(tmp_path, wait_until):
    """At concurrency 1 each round used to be two commits (complete, then claim); the claim
    that refills a slot now rides in the completion's transaction. Exactly-once still holds."""
    count = 40
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", worker_concurrency=1)
    await m.initialize()
    try:
        await m.enqueue_many([{"name": "one", "data": i} for i in range(count)])
        runs: list[int] = []
        done = asyncio.Event()

        async def handler(job) -> None:
            runs.append(job.data)
            if len(runs) == count:
                done.set()

        counter = _CommitCounter()
        writer = m.store._writer  # counting statements on both write connections
        writer._inline.set_trace_callback(counter)
        writer.submit(lambda conn: conn.set_trace_callback(counter))
        m.register("one", handler)
        await m.start()
        async with asyncio.timeout(20):
            await done.wait()

        async def all_completed() -> bool:
            return (await m.store.stats("one")).completed == count

        await wait_until(all_completed, 20)
        await m.stop()
        assert sorted(runs) == list(range(count))  # each job ran exactly once
        assert counter.commits < count * 1.5  # was 2 per job: claim and completion apart
    finally:
        await m.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_mints_ids_with_its_own_random_part():
    parent = new_object_id()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one id and leave at once
        os.write(write_end, new_object_id().encode())
        os._exit(0)
    os.close(write_end)
    child = os.read(read_end, 64).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    assert len(child) == 24 and child[8:18] != parent[8:18]


@pytest.mark.parametrize("inline", [True, False])
async def test_a_failing_claim_never_fails_the_completions_it_carried(tmp_path, inline):
    """The claim that takes this turn's completions into its transaction fails: the
    transaction rolls back as a whole, and the completions are written on their own."""
    from monque_engine.store.sqlite.runner import MISS

    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    store = m.store
    try:
        await m.enqueue("n", 1)
        (job,) = await store.claim("n", "me", now_ms(), 1, 30_000)
        # complete() queues the job as it is called; its flush waits for the next loop turn.
        completing = asyncio.ensure_future(store.complete(job.id, "me", now_ms(), None))

        def broken_claim(conn, feed=None):
            raise sqlite3.OperationalError("claim went wrong")

        if inline:
            assert await store._batch.claim_with(broken_claim, inline=True) is MISS
        else:
            with pytest.raises(Exception, match="claim went wrong"):
                await store._batch.claim_with(broken_claim, inline=False)
        done = await asyncio.wait_for(completing, 5)
        assert done is not None and done.status.value == "completed"
        assert (await m.get_job(job.id)).status.value == "completed"
    finally:
        await m.close()


async def test_a_feed_pull_is_one_statement_and_a_watcher_far_behind_reads_every_change_in_order(tmp_path):
    """Each wake-up of a stream costs one statement (head, pruning mark and rows in one
    snapshot), not five: under a drain the engine's own watcher wakes every ~2 ms."""
    from monque_engine.store.sqlite.feed import PULL_LIMIT

    count = 2 * PULL_LIMIT + 5
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "bulk", "data": {"i": i}} for i in range(count)])
        feed = m.store._feed
        conn = sqlite3.connect(tmp_path / "jobs.db")
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            rows, high = feed._pull(conn, feed._pull_sql(True, None), 0)
            assert len(statements) == 1
            assert high == count
            # Each row keeps the head and pruning mark before its change (seq, op, id, ...).
            assert [row[2] for row in rows] == list(range(1, PULL_LIMIT + 1))  # one page, from the start
            assert [row[4] for row in rows] == [j.id for j in jobs[:PULL_LIMIT]]
            assert feed._pull(conn, feed._pull_sql(False, None), count) == ([], count)
        finally:
            conn.close()
        stream = await m.open_watch(resume_after=0)
        seen = []
        async for change in stream:
            seen.append(change)
            if len(seen) == count:
                break
        await stream.aclose()
        assert [c.job_id for c in seen] == [j.id for j in jobs]
        assert [c.token for c in seen] == list(range(1, count + 1))
        assert all(c.job is not None and c.job.data == {"i": i} for i, c in enumerate(seen))
    finally:
        await m.close()


def _wal_frames(path) -> int:
    conn = sqlite3.connect(path)
    try:
        _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        conn.close()
    return int(frames)


async def test_writes_go_on_while_the_checkpointer_copies_and_the_wal_still_restarts(tmp_path, monkeypatch, wait_until):
    """A checkpoint syncs both files (20-40 ms here). SQLite's own runs inside the COMMIT
    that crosses 1,000 pages, and that commit's callers waited for it (every tenth
    ``enqueue_many`` of 1,000 jobs). Now no write connection checkpoints: a thread of its
    own does, its long first pass beside inline *and* batched writes, and only a short second
    pass under the gate, so the WAL can restart."""
    import threading

    from monque_engine.store.sqlite import checkpointer

    monkeypatch.setattr(checkpointer, "CHECKPOINT_FRAMES", 20 * checkpointer.FRAMES_PER_COMMIT)
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    writer = m.store._writer
    worker = writer._checkpointer
    entered, release = threading.Event(), threading.Event()
    passes: list[tuple[str, bool]] = []  # each pass's mode, and whether the checkpointer held the gate

    class WatchedGate:
        """The writers' gate as the checkpointer takes it, noting when it holds it."""

        held = False

        def __enter__(self) -> None:
            writer._gate.acquire()
            WatchedGate.held = True

        def __exit__(self, *_: object) -> None:
            WatchedGate.held = False
            writer._gate.release()

    worker._gate = WatchedGate()
    real_pass = worker._pass

    def held_first_pass(conn: sqlite3.Connection, mode: str) -> tuple[int, int, int]:
        passes.append((mode, WatchedGate.held))
        if len(passes) == 1:
            entered.set()
            release.wait(10)
        return real_pass(conn, mode)

    worker._pass = held_first_pass
    try:
        for i in range(20):  # about 20 commits' frames ask for a checkpoint
            await m.enqueue("a", {"i": i})
        assert await asyncio.to_thread(entered.wait, 10)
        queued: list[object] = []
        real_submit = writer.submit
        writer.submit = lambda op: (queued.append(op), real_submit(op))[1]
        for i in range(10):  # the checkpoint's first pass is still running
            await asyncio.wait_for(m.enqueue("a", {"during": i}), 5)
        assert queued == []  # every one committed inline, none waited for a thread
        writer.submit = real_submit
        # A batch on the write thread commits too (SQLite's own checkpoint is off there).
        await asyncio.wait_for(m.enqueue_many([{"name": "a", "data": {"bulk": i}} for i in range(500)]), 5)
        assert passes == [("PASSIVE", False)]
        release.set()
        await wait_until(lambda: worker.checkpoints >= 1, 10)
        # PASSIVE passes beside the writers, then the closing RESTART pass under the gate.
        first = passes[: next(i for i, (mode, _) in enumerate(passes) if mode == "RESTART") + 1]
        assert all(p == ("PASSIVE", False) for p in first[:-1]) and first[-1] == ("RESTART", True)
        await m.enqueue("a", {"after": True})  # the first writer after a full checkpoint restarts the WAL
        assert _wal_frames(tmp_path / "jobs.db") < 20  # one commit's frames, not the 31 commits before it
        assert (await m.store.stats("a")).pending == 531
    finally:
        release.set()
        await m.close()


async def test_no_write_connection_checkpoints_inside_its_commit(tmp_path):
    """Both connections that write (inline and the write thread's) leave checkpoints to the
    Checkpointer: SQLite's automatic one would make a commit wait for two syncs."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        writer = m.store._writer
        inline = writer._inline.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        threaded = await writer.run(lambda conn: conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        assert (inline, threaded) == (0, 0)
        assert writer._checkpointer is not None
    finally:
        await m.close()


async def test_a_drain_round_writes_its_completions_and_claim_feed_rows_in_one_statement(tmp_path, wait_until):
    """A round at concurrency 5 completes 5 jobs and claims 5 in one transaction; their 10
    feed rows were two executemany calls (10 statements stepped from Python), now one
    multi-row INSERT, completions first. Every change is still in the feed, in order."""
    count = 40
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", worker_concurrency=5)
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "five", "data": i} for i in range(count)])
        done = asyncio.Event()
        runs: list[int] = []

        async def handler(job) -> None:
            runs.append(job.data)
            if len(runs) == count:
                done.set()

        statements: list[str] = []
        m.store._writer._inline.set_trace_callback(statements.append)
        m.register("five", handler)
        await m.start()
        async with asyncio.timeout(20):
            await done.wait()

        async def all_completed() -> bool:
            return (await m.store.stats("five")).completed == count

        await wait_until(all_completed, 20)
        await m.stop()
        feed_inserts_per_commit: list[int] = []
        current = 0
        for sql in statements:
            if sql.startswith("INSERT INTO monque_jobs_changes"):
                current += 1
            elif sql == "COMMIT":
                feed_inserts_per_commit.append(current)
                current = 0
        assert feed_inserts_per_commit and max(feed_inserts_per_commit) == 1
        assert sorted(runs) == list(range(count))
    finally:
        await m.close()
    conn = sqlite3.connect(tmp_path / "jobs.db")
    try:
        feed = conn.execute(
            "SELECT job_id, status FROM monque_jobs_changes WHERE op = 'update' ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    for job in jobs:  # each job: claimed (processing), then completed, in that order
        assert [status for job_id, status in feed if job_id == job.id] == ["processing", "completed"]


def test_the_engine_runs_on_uvloop_the_optional_extra(tmp_path):
    """``pip install 'monque-tui[uvloop]'`` then ``uvloop.run(main())``: claims, inline and
    threaded writes, the change feed and a clean stop all work on uvloop's loop."""
    uvloop = pytest.importorskip("uvloop")

    async def main() -> tuple[list[int], list[str], str]:
        m = Monque(f"sqlite:///{tmp_path}/jobs.db", worker_concurrency=5)
        await m.initialize()
        ran: list[int] = []
        done = asyncio.Event()

        async def handler(job) -> None:
            ran.append(job.data)
            if len(ran) == 30:
                done.set()

        stream = await m.open_watch()
        m.register("uv", handler)
        await m.start()
        await m.enqueue_many([{"name": "uv", "data": i} for i in range(25)])
        for i in range(25, 30):
            await m.enqueue("uv", i)
        async with asyncio.timeout(20):
            await done.wait()
        seen: list[str] = []
        async with asyncio.timeout(20):
            async for change in stream:
                seen.append(change.operation)
                if seen.count("insert") == 30:
                    break
        await stream.aclose()
        await m.stop()
        await m.close()
        return ran, seen, type(asyncio.get_running_loop()).__module__

    ran, seen, loop_module = uvloop.run(main())
    assert loop_module.startswith("uvloop")
    assert sorted(ran) == list(range(30))
    assert seen.count("insert") == 30


async def test_a_status_filtered_watcher_is_not_woken_by_commits_it_does_not_want(tmp_path, wait_until):
    """The engine's own watcher listens for pending jobs only. During a drain every claim
    and completion commits rows it filters out, and waking it for each (a pull, two thread
    hops) cost the drain a fifth of its loop time. The watcher thread now checks, per
    stream, whether anything wanted arrived before waking it; wanted rows still wake it."""
    from monque_engine import JobStatus

    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "quiet", "data": i} for i in range(1000)])
        feed = m.store._feed
        pulls: list[int] = []
        real_pull = feed._pull

        def counting_pull(conn, sql, after):
            pulls.append(after)
            return real_pull(conn, sql, after)

        feed._pull = counting_pull
        stream = await m.store.open_watch(statuses=(JobStatus.PENDING,), full_document=False)
        seen = []

        async def consume() -> None:
            async for change in stream:
                seen.append(change)

        consumer = asyncio.create_task(consume())
        await wait_until(lambda: len(pulls) >= 1, 10)
        pulls.clear()
        for job in jobs:  # 1,000 commits, each a 'cancelled' feed row this stream filters out
            await m.cancel_job(job.id)
            await asyncio.sleep(0)  # an inline commit never suspends: let the stream run between them
        late = await m.enqueue("quiet", "late")
        await wait_until(lambda: any(c.job_id == late.id for c in seen), 10)
        assert [c.job_id for c in seen] == [late.id]
        assert len(pulls) <= 2  # the wanted insert's wake (one more if it met a pull); was one per 2 ms
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
    finally:
        await m.close()


async def test_concurrent_producers_share_commits_and_a_lone_producer_stays_inline(tmp_path):
    """Producers that wake together (request handlers, gathered calls) used to each commit
    alone on the loop, one after another: 64 coroutines enqueued no faster than one. Now,
    once more than one task writes in a loop turn, their inserts go to the write thread and
    share its group commit; a lone producer never yields, so it stays on the inline path."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    writer = m.store._writer
    inline_commits: list[str] = []
    # A commit of its own: COMMIT, or (past the streak) an autocommit append to the inbox.
    writer._inline.set_trace_callback(
        lambda sql: inline_commits.append(sql) if sql == "COMMIT" or "monque_jobs_inbox (" in sql else None
    )
    submitted: list[object] = []
    real_submit = writer.submit
    writer.submit = lambda op: (submitted.append(op), real_submit(op))[1]
    thread_batches: list[int] = []
    real_commit_batch = writer._commit_batch
    writer._commit_batch = lambda conn, batch: (thread_batches.append(len(batch)), real_commit_batch(conn, batch))[1]
    try:
        for i in range(50):
            await m.enqueue("lone", {"i": i})
        assert (len(inline_commits), submitted) == (50, [])

        inline_commits.clear()

        async def producer(p: int) -> None:
            for i in range(5):
                await m.enqueue("crowd", {"p": p, "i": i})

        await asyncio.gather(*(producer(p) for p in range(32)))
        assert (await m.store.stats("crowd")).pending == 160
        commits = len(inline_commits) + len(thread_batches)
        assert commits <= 160 // 4, (len(inline_commits), thread_batches)
        assert sum(thread_batches) == len(submitted) > 0

        inline_commits.clear()
        for i in range(5):  # the crowd is gone: a lone producer is inline again
            await m.enqueue("lone", {"after": i})
            await asyncio.sleep(0)
        assert len(inline_commits) >= 4
    finally:
        await m.close()
