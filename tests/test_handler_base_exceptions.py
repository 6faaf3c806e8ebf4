"""Handlers that end with something other than an ``Exception`` (ADR 0010).

A handler that lets ``asyncio.CancelledError`` out without being cancelled, or raises
``GeneratorExit``, ``KeyboardInterrupt`` or ``SystemExit``, used to leave its job
``processing``: re-run after every lock timeout and never counted as a failure (a
CancelledError), or the whole worker process dead on every claim (SystemExit, a poison job).
Now each is a failure of that job; KeyboardInterrupt / SystemExit from an async handler then
still stop the program, after the failure is stored.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from monque_engine import JobStatus, Monque
from tests.conftest import SHORT_INTERVALS, EventRecorder

ROOT = Path(__file__).resolve().parent.parent


async def _started(tmp_path: Path, name: str, handler: Any) -> tuple[Monque, EventRecorder]:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **{**SHORT_INTERVALS, "max_retries": 2})
    await m.initialize()
    rec = EventRecorder().attach(m, "job:fail", "job:complete")
    m.register(name, handler)
    m.register("fine", lambda job: None)
    await m.start()
    return m, rec


async def _assert_failed_and_worker_alive(m: Monque, rec: EventRecorder, job_id: str, reason: str) -> None:
    first = (await rec.wait_for("job:fail", where=lambda e: e.job.id == job_id))[0]
    assert first.will_retry and first.job.fail_count == 1
    assert first.job.fail_reason == reason
    # max_retries=2: the retry fails for good, so the job ends in a final state.
    await rec.wait_for("job:fail", where=lambda e: e.job.id == job_id and not e.will_retry)
    stored = await m.get_job(job_id)
    assert stored is not None and stored.status is JobStatus.FAILED and stored.fail_count == 2
    # The worker is still up and processing.
    assert m.is_running
    other = await m.enqueue("fine")
    await rec.wait_for("job:complete", where=lambda e: e.job.id == other.id)


async def _expect_failed_run(tmp_path: Path, name: str, handler: Any, reason: str) -> None:
    """Run one job of ``handler``: it must fail with ``reason`` and leave the worker running."""
    m, rec = await _started(tmp_path, name, handler)
    try:
        job = await m.enqueue(name)
        await _assert_failed_and_worker_alive(m, rec, job.id, reason)
    finally:
        await m.close()


async def test_an_async_handler_raising_its_own_cancelled_error_fails_the_job(tmp_path: Path) -> None:
    async def handler(job: Any) -> None:
        inner = asyncio.get_running_loop().create_future()
        inner.cancel()
        await inner  # awaiting something another party cancelled

    await _expect_failed_run(tmp_path, "cancels", handler, "Handler raised CancelledError")


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (asyncio.CancelledError(), "Handler raised CancelledError"),
        (KeyboardInterrupt(), "Handler raised KeyboardInterrupt"),
        (SystemExit(3), "Handler raised SystemExit: 3"),
        (GeneratorExit(), "Handler raised GeneratorExit"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else "",
)
async def test_a_sync_handler_ending_with_a_base_exception_fails_the_job(
    tmp_path: Path, error: BaseException, reason: str
) -> None:
    def handler(job: Any) -> None:  # runs in a thread, where these only end the call
        raise error

    await _expect_failed_run(tmp_path, "ends", handler, reason)


async def test_an_async_handler_raising_generator_exit_fails_the_job(tmp_path: Path) -> None:
    async def handler(job: Any) -> None:
        raise GeneratorExit

    await _expect_failed_run(tmp_path, "gen", handler, "Handler raised GeneratorExit")


async def test_stop_still_leaves_a_cancelled_handler_processing_for_recovery(tmp_path: Path) -> None:
    """The cancellation stop() makes is not a failure: the job stays processing (unchanged)."""
    started = asyncio.Event()

    async def handler(job: Any) -> None:
        started.set()
        await asyncio.Event().wait()

    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **{**SHORT_INTERVALS, "shutdown_timeout": 0.1})
    await m.initialize()
    try:
        m.register("hangs", handler)
        job = await m.enqueue("hangs")
        await m.start()
        await asyncio.wait_for(started.wait(), 5)
        await m.stop()
        stored = await m.get_job(job.id)
        assert stored is not None and stored.status is JobStatus.PROCESSING and stored.fail_count == 0
    finally:
        await m.close()


WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from monque_engine import Monque

    async def main(url, kind):
        m = Monque(url, poll_interval=0.05, heartbeat_interval=0.05)
        await m.initialize()

        async def handler(job):
            if kind == "exit":
                sys.exit(3)
            raise KeyboardInterrupt

        m.register("ends", handler)
        await m.enqueue("ends")
        async with m:
            await m.start()
            await asyncio.Event().wait()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.mark.parametrize(
    ("kind", "returncode", "reason"),
    [("exit", 3, "Handler raised SystemExit: 3"), ("kbd", None, "Handler raised KeyboardInterrupt")],
)
def test_system_exit_or_keyboard_interrupt_from_an_async_handler_is_stored_then_stops_the_program(
    tmp_path: Path, kind: str, returncode: int | None, reason: str
) -> None:
    db = tmp_path / "jobs.db"
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    done = subprocess.run(
        [sys.executable, str(script), f"sqlite:///{db}", kind],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if returncode is not None:
        assert done.returncode == returncode, done.stderr
    else:
        assert done.returncode != 0, done.stderr
    assert "the job is recorded as failed and the exception goes on to stop the program" in done.stderr
    assert "never retrieved" not in done.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT status, fail_count, fail_reason FROM monque_jobs").fetchall()
    assert rows == [("pending", 1, reason)]


def _sync_generator(job: Any) -> Any:
    yield job


async def _async_generator(job: Any) -> Any:
    yield job


class _GeneratorCall:
    def __call__(self, job: Any) -> Any:
        yield job


@pytest.mark.parametrize("handler", [_sync_generator, _async_generator], ids=["def-yield", "async-def-yield"])
async def test_a_generator_function_is_refused_as_a_handler(tmp_path: Path, handler: Any) -> None:
    # Its body never ran, and every job was marked completed.
    from monque_engine import WorkerRegistrationError

    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **SHORT_INTERVALS)
    with pytest.raises(WorkerRegistrationError, match="is a generator function") as info:
        m.register("gen", handler)
    assert "\n" not in str(info.value)
    assert m.registered_names == []


async def test_a_callable_returning_a_generator_fails_its_job_instead_of_completing(tmp_path: Path) -> None:
    m, rec = await _started(tmp_path, "gen", _GeneratorCall())
    try:
        job = await m.enqueue("gen")
        failed = (await rec.wait_for("job:fail", where=lambda e: e.job.id == job.id))[0]
        assert isinstance(failed.error, TypeError) and "returned a generator" in failed.job.fail_reason
        assert rec.of("job:complete") == []
    finally:
        await m.close()
