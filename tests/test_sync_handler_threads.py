"""Sync handlers run on daemon threads (scheduler/threads.py), so a program whose handler never
returns still exits after ``close()``.

Found by the acceptance probe: with a sync handler that never returns, ``stop()`` gave up on it after
``shutdown_timeout`` and ``close()`` returned, but the program never exited:
``asyncio.run`` joined the default executor's thread, which never ends. The console's
worker command worked around it with ``os._exit``; a program of one's own just hung.
"""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from monque_engine.scheduler.threads import DaemonThreads
from tests.conftest import poll_until

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    from monque_engine import Monque

    async def main(url):
        m = Monque(url, poll_interval=0.05, shutdown_timeout=0.2)
        await m.initialize()
        started = threading.Event()

        def hangs(job):
            started.set()
            threading.Event().wait()  # never returns

        m.register("hangs", hangs)
        await m.enqueue("hangs")
        await m.start()
        while not started.is_set():
            await asyncio.sleep(0.01)
        await m.close()
        print("closed", flush=True)

    asyncio.run(main(sys.argv[1]))
    print("asyncio.run returned", flush=True)
    """
)


def test_a_program_whose_sync_handler_never_returns_still_exits_after_close(tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    try:
        done = subprocess.run(
            [sys.executable, str(script), f"sqlite:///{tmp_path}/jobs.db"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,  # a hang, not a slow exit, is what this catches
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the program did not exit after close(): {error.stdout!r}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["closed", "asyncio.run returned"]


async def test_results_exceptions_and_context_reach_the_caller() -> None:
    threads = DaemonThreads()
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var")
    var.set("caller's")
    assert await threads.run(lambda a, b: a + b, 2, 3) == 5
    assert await threads.run(var.get) == "caller's"
    with pytest.raises(ValueError, match="boom"):
        await threads.run(_raise, ValueError("boom"))
    with pytest.raises(SystemExit):  # reaches the awaiting task, as from asyncio.to_thread
        await threads.run(_raise, SystemExit(3))
    assert await threads.run(lambda: threading.current_thread().daemon) is True


async def test_idle_threads_are_reused_and_end_when_idle() -> None:
    threads = DaemonThreads(name="monque-probe-pool", idle_seconds=0.2)

    def pool() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "monque-probe-pool"]

    gate = threading.Event()
    running = [threads.run(gate.wait) for _ in range(3)]  # three at once: three threads
    await poll_until(lambda: len(pool()) == 3, message="three threads")
    gate.set()
    await asyncio.gather(*running)
    for _ in range(20):  # one at a time afterwards: the idle threads take them, none is added
        await threads.run(lambda: None)
        assert len(pool()) <= 3
    await poll_until(lambda: not pool(), message="idle threads end")
    assert await threads.run(lambda: 7) == 7  # and a new one starts when needed


async def test_a_cancelled_wait_leaves_the_call_running_and_drops_its_result() -> None:
    threads = DaemonThreads()
    gate = threading.Event()
    future = threads.run(gate.wait)
    future.cancel()
    gate.set()
    assert await threads.run(lambda: "next") == "next"  # the pool still works
    assert future.cancelled()


def _raise(error: BaseException) -> None:
    raise error


async def test_at_most_max_threads_run_and_the_rest_queue() -> None:
    """As many threads as asyncio's default executor would start (by default), no more."""
    threads = DaemonThreads(name="monque-probe-capped", max_threads=2, idle_seconds=0.2)
    gate = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def work(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        gate.wait()
        with lock:
            running -= 1
        return n

    calls = [threads.run(work, n) for n in range(6)]
    await poll_until(lambda: running == 2, message="two calls run")
    assert len([t for t in threading.enumerate() if t.name == "monque-probe-capped"]) == 2
    gate.set()
    assert await asyncio.gather(*calls) == list(range(6))
    assert most == 2
    await poll_until(
        lambda: not [t for t in threading.enumerate() if t.name == "monque-probe-capped"], message="idle end"
    )
    assert await threads.run(lambda: "again") == "again"
