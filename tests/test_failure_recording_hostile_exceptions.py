"""Recording a failure cannot fail, whatever the handler's exception does (issue 25, point 6).

A handler's exception is arbitrary code. One whose ``__str__`` returned a ``str`` subclass
that raised on ``len()`` made the failure's message builder raise: the job stayed
``processing``, ran again after every lock timeout past ``max_retries``, and no event told
anyone. Here each hostile shape is raised by a real handler of a real engine on a real
SQLite file, and the job must end exactly as a plain failure would: retried, then failed,
with plain storable text, ``job:fail`` each time, never run again.

Also: a listener that re-raises such an exception cannot break the emitter, and a failure
the store refuses to write is written once more in a plain form (``job:error``, then
``job:fail``), instead of leaving the job ``processing``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from monque_engine import JobStatus
from monque_engine.attempts import MAX_TRACEBACK_CHARS
from tests.hostile_exceptions import MAX_MESSAGE_CHARS, SHAPES, LenRaises
from tests.hostile_exceptions import storable_text as _storable

# -- the engine records each shape ------------------------------------------------------------


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_a_hostile_exception_fails_its_job_like_any_other(monque, recorder, shape: str) -> None:
    make, reason_ok = SHAPES[shape]
    m = await monque(max_retries=2)
    rec = recorder(m, "job:fail", "job:error", "job:complete")
    runs: list[str] = []

    async def handler(job: Any) -> None:
        runs.append(job.data)
        if job.data == "hostile":
            raise make()

    m.register("w", handler)
    job = await m.enqueue("w", "hostile")
    await m.start()
    fails = await rec.wait_for("job:fail", count=2)
    assert [f.will_retry for f in fails] == [True, False]
    assert rec.of("job:error") == []
    stored = await m.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.FAILED and stored.fail_count == 2
    assert _storable(stored.fail_reason, MAX_MESSAGE_CHARS + 1) and reason_ok(stored.fail_reason), stored.fail_reason
    assert _storable(stored.error_type, MAX_MESSAGE_CHARS) and stored.error_group
    assert [a.outcome for a in stored.attempts] == ["retrying", "failed"]
    for attempt in stored.attempts:
        assert attempt.error_type == stored.error_type and attempt.error_message == stored.fail_reason
        assert _storable(attempt.traceback, MAX_TRACEBACK_CHARS + 200)
    # Never run again: stale recovery has nothing to return, and the worker goes on to the next job.
    assert await m.recover_stale_jobs() == 0
    await m.enqueue("w", "after")
    await rec.wait_for("job:complete")
    assert runs == ["hostile", "hostile", "after"]
    assert (await m.get_job(job.id)).status is JobStatus.FAILED


async def test_a_hostile_base_exception_from_a_sync_handler_is_recorded(monque, recorder) -> None:
    """ADR 0010's path (a handler's BaseException names its type) with a hostile message."""

    class Escape(BaseException):
        def __str__(self) -> str:
            return LenRaises("escaping")

    m = await monque(max_retries=1)
    rec = recorder(m, "job:fail", "job:error")

    def handler(job: Any) -> None:
        raise Escape()

    m.register("w", handler)
    job = await m.enqueue("w")
    await m.start()
    [fail] = await rec.wait_for("job:fail")
    assert fail.will_retry is False and rec.of("job:error") == []
    stored = await m.get_job(job.id)
    assert stored.status is JobStatus.FAILED and stored.fail_reason == "Handler raised Escape: escaping"


# -- listeners ----------------------------------------------------------------------------------

RELAYED = ("__notes__-raise", "__getattribute__-raises", "exception-group-of-hostile-members")


async def test_a_listener_that_re_raises_a_hostile_exception_cannot_break_the_emitter(monque, recorder) -> None:
    """The emitter logs a listener's exception; logging one whose attributes raise used to
    raise out of ``emit``: later listeners were skipped and the fail path was left half way."""
    m = await monque(max_retries=1)

    def relay(event: Any) -> None:
        raise event.error

    m.on("job:fail", relay)
    rec = recorder(m, "job:fail", "job:error", "job:complete")  # listeners after the raising one

    async def handler(job: Any) -> None:
        if job.data in SHAPES:
            raise SHAPES[job.data][0]()

    m.register("w", handler)
    jobs = [await m.enqueue("w", shape) for shape in RELAYED]
    await m.start()
    await rec.wait_for("job:fail", count=len(RELAYED))
    for job in jobs:
        assert (await m.get_job(job.id)).status is JobStatus.FAILED
    await m.enqueue("w", "after")
    await rec.wait_for("job:complete")
    assert rec.of("job:error") == []


# -- a failure the store refuses ------------------------------------------------------------------


async def test_a_failure_the_store_refuses_is_written_plainly(tmp_path, recorder) -> None:
    """SQLite refuses a row longer than SQLITE_LIMIT_LENGTH ("string or blob too big"): the
    full record is refused for its data, the plain one fits. Not processing, not run again."""
    from monque_engine import Monque

    m = Monque(f"sqlite:///{tmp_path}/jobs.db", poll_interval=0.05, base_retry_interval=0.01, max_retries=2)
    await m.initialize()
    try:
        writer = m.store._writer
        limit = 4_000

        def cap(conn: sqlite3.Connection) -> None:
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limit)

        if writer._inline is not None:
            cap(writer._inline)
        await writer.submit(cap)
        rec = recorder(m, "job:fail", "job:error")
        runs = []

        async def handler(job: Any) -> None:
            runs.append(job.id)
            raise ValueError("long " * 1_000)  # 5000 characters: the full record is over the limit

        m.register("w", handler)
        job = await m.enqueue("w")
        await m.start()
        fails = await rec.wait_for("job:fail", count=2)
        assert [f.will_retry for f in fails] == [True, False]
        errors = rec.of("job:error")
        assert len(errors) == 2 and all(e.job.id == job.id for e in errors)
        assert "too big" in str(errors[0].error.__cause__ or errors[0].error)
        stored = await m.get_job(job.id)
        assert stored.status is JobStatus.FAILED and stored.fail_count == 2 and len(runs) == 2
        assert stored.fail_reason.startswith("ValueError (the failure could not be stored in full: ")
        assert [a.outcome for a in stored.attempts] == ["retrying", "failed"]
        assert await m.recover_stale_jobs() == 0
    finally:
        await m.close()
