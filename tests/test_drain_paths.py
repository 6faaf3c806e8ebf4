"""The drain's per-job fast paths keep the guarded semantics of the plain ones (issue 14, third pass).

A one-off completion of a job the SQLite store claimed is answered by ``complete`` with a
queued future instead of a coroutine (two coroutine layers less); the processor keeps its loop
instead of asking ``asyncio`` for it per job (a ``getpid`` system call on Python 3.11); the
feed's watcher thread is poked only when it has not been poked since its last look. Each is
checked here on a real SQLite file against what the slow path promised.
"""

from __future__ import annotations

import asyncio
import sqlite3

from monque_engine import JobStatus, Monque
from monque_engine.store.sqlite import SqliteStore
from monque_engine.timeutil import now_ms


async def _store_with_claims(tmp_path, count: int) -> tuple[Monque, list]:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    await m.enqueue_many([{"name": "w", "data": i} for i in range(count)])
    claimed = await m.store.claim("w", "me", now_ms(), count, 30_000)
    assert len(claimed) == count
    return m, claimed


async def test_a_queued_completion_writes_once_under_the_same_guard_as_complete(tmp_path):
    m, (first, second, third) = await _store_with_claims(tmp_path, 3)
    try:
        store = m.store
        now = now_ms()
        # Another owner took the second job meanwhile (stale recovery elsewhere): not ours.
        await store.execute_write(
            lambda conn: conn.execute("UPDATE monque_jobs SET claimed_by = 'other' WHERE id = ?", (second.id,))
        )
        done = store.complete(first.id, "me", now, None)
        lost = store.complete(second.id, "me", now, None)
        assert isinstance(done, asyncio.Future) and isinstance(lost, asyncio.Future)  # queued
        alone = store.complete("0" * 24, "me", now, None)  # never claimed here: written alone
        assert not isinstance(alone, asyncio.Future)
        assert await alone is None
        completed, skipped = await asyncio.gather(done, lost)
        assert skipped is None  # the guard held it back: nothing written, as complete() would
        assert completed is not None and completed.status is JobStatus.COMPLETED
        assert await m.get_job(first.id) == completed  # the returned job is the stored row
        assert (await m.get_job(second.id)).status is JobStatus.PROCESSING
        # Once: the claim is no longer tracked, and the plain path finds it no longer processing.
        again = store.complete(first.id, "me", now, None)
        assert not isinstance(again, asyncio.Future)
        assert await again is None
        # The plain path still completes what the queue does not take.
        assert (await store.complete(third.id, "me", now, None)).status is JobStatus.COMPLETED
    finally:
        await m.close()


async def test_a_store_that_wraps_complete_is_called_for_every_completion(tmp_path, wait_until):
    """Subclasses (the test suite's failing stores, a user's instrumented store) override
    ``complete``: the queued path must not go around them."""
    calls: list[str] = []

    class Counting(SqliteStore):
        async def complete(self, job_id, owner, now_ms, next_run_at_ms, attempt=None):
            calls.append(job_id)
            return await super().complete(job_id, owner, now_ms, next_run_at_ms, attempt)

    store = Counting.from_url(f"sqlite:///{tmp_path}/jobs.db")
    m = Monque(store, worker_concurrency=8)
    await m.initialize()
    try:
        jobs = await m.enqueue_many([{"name": "w", "data": i} for i in range(20)])
        m.register("w", lambda job: None)
        await m.start()

        async def all_completed() -> bool:
            return (await m.store.stats("w")).completed == 20

        await wait_until(all_completed, 20)
        assert sorted(calls) == sorted(job.id for job in jobs)
    finally:
        await m.close()


async def test_a_complete_wrapped_on_the_instance_is_called_for_every_completion(tmp_path, wait_until):
    """Not only subclasses: a wrapper set on the store object (a mock, an instrumented store)
    sees every completion too. ``complete`` is the one entry point (ADR 0018), so nothing in
    the store decides by the object's type whether to go around it."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", worker_concurrency=8)
    await m.initialize()
    store = m.store
    calls: list[str] = []
    real_complete = store.complete

    def complete(job_id, owner, now_ms, next_run_at_ms, attempt=None):
        calls.append(job_id)
        return real_complete(job_id, owner, now_ms, next_run_at_ms, attempt)

    store.complete = complete
    try:
        jobs = await m.enqueue_many([{"name": "w", "data": i} for i in range(20)])
        m.register("w", lambda job: None)
        await m.start()

        async def all_completed() -> bool:
            return (await m.store.stats("w")).completed == 20

        await wait_until(all_completed, 20)
        assert sorted(calls) == sorted(job.id for job in jobs)
    finally:
        await m.close()


async def test_a_drain_does_not_ask_asyncio_for_the_loop_per_job(tmp_path, monkeypatch, wait_until):
    """``asyncio.get_running_loop()`` checks the process id with a system call on Python
    3.11; the processor and the store keep the loop they started on instead."""
    count = 300
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", worker_concurrency=32)
    await m.initialize()
    try:
        await m.enqueue_many([{"name": "w", "data": i} for i in range(count)])
        completed = asyncio.Event()
        seen: list[int] = []

        async def handler(job) -> None:
            seen.append(job.data)

        def on_complete(_event) -> None:
            if len(seen) == count:
                completed.set()

        m.register("w", handler)
        m.on("job:complete", on_complete)
        real = asyncio.get_running_loop
        lookups = []

        def counting() -> asyncio.AbstractEventLoop:
            lookups.append(1)
            return real()

        monkeypatch.setattr(asyncio, "get_running_loop", counting)
        await m.start()
        async with asyncio.timeout(20):
            await completed.wait()
        monkeypatch.setattr(asyncio, "get_running_loop", real)
        assert sorted(seen) == list(range(count))
        assert len(lookups) < count // 10  # was two per job (the launch and the completion)
    finally:
        await m.close()


async def test_commits_while_the_watcher_has_not_looked_poke_it_once(tmp_path, wait_until):
    """A poke already pending is not set again (a lock and a notify per commit); the thread
    clears it before it looks, so the look it makes covers the later commits too."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        feed = m.store._feed
        assert feed is not None
        feed._stop.set()  # the thread stops looking: a poke, once set, stays pending
        feed._poke.set()
        feed._watched.set()  # (as close() does: it may be asleep waiting for a first stream)
        await wait_until(lambda: not feed._thread.is_alive(), 5)
        feed._poke.clear()
        sets = []
        real_set = feed._poke.set

        def counting_set() -> None:
            sets.append(1)
            real_set()

        feed._poke.set = counting_set  # type: ignore[method-assign]
        feed._subscribe(asyncio.Event(), None)  # a stream that wants every change
        for i in range(5):
            await m.enqueue("w", i)
        assert len(sets) == 1  # was one per commit
        assert feed._poke.is_set()
    finally:
        await m.close()
    conn = sqlite3.connect(tmp_path / "jobs.db")
    try:
        assert conn.execute("SELECT count(*) FROM monque_jobs").fetchone()[0] == 5
    finally:
        conn.close()


def test_payload_decoding_on_the_claim_path_is_json_loads_exactly():
    """``row_to_job`` decodes payloads with the C scanner directly; whatever it does not take
    whole goes through ``json.loads``, so values and errors are that call's."""
    import json
    import math

    import pytest

    from monque_engine.store.sqlite.queries import _decode

    for text in ['{"a": 1}', '{"a":[1,2,{"b":null}]}', ' {"a":1}', '{"a":1} ', '"x"', "3", "null", b'{"a":1}']:
        assert _decode(text) == json.loads(text)
    assert math.isnan(_decode("NaN"))
    for bad in ['{"a":1}x', "", "\ufeff{}", "{'a': 1}"]:
        with pytest.raises(json.JSONDecodeError) as ours:
            _decode(bad)
        with pytest.raises(json.JSONDecodeError) as theirs:
            json.loads(bad)
        assert str(ours.value) == str(theirs.value)


def test_drain_ab_alternates_two_trees_and_reports_loop_cpu(tmp_path):
    """``python -m bench.drain_ab`` (the A/B this pass was measured with) runs end to end."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import monque_engine

    root = Path(__file__).resolve().parent.parent
    base = tmp_path / "base"
    shutil.copytree(Path(monque_engine.__file__).parent, base / "monque_engine")
    out = subprocess.run(
        [sys.executable, "-m", "bench.drain_ab", "--base", str(base), "--rounds", "1", "--jobs", "200", "-c", "4"],
        cwd=root,
        env=dict(os.environ, PYTHONPATH=str(root)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "c4 round 1" in out.stdout and "loop CPU per job" in out.stdout


def test_enqueue_ab_alternates_two_trees_and_reports_cpu_per_job(tmp_path):
    """``python -m bench.enqueue_ab`` (issue 35's single-enqueue A/B) runs end to end."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import monque_engine

    root = Path(__file__).resolve().parent.parent
    base = tmp_path / "base"
    shutil.copytree(Path(monque_engine.__file__).parent, base / "monque_engine")
    out = subprocess.run(
        [sys.executable, "-m", "bench.enqueue_ab", "--base", str(base), "--rounds", "1", "--jobs", "100"],
        cwd=root,
        env=dict(os.environ, PYTHONPATH=str(root)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "round 1" in out.stdout and "process CPU per job" in out.stdout
