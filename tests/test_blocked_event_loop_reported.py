"""An async handler that blocks the event loop (``time.sleep``) past ``lock_timeout``.

Nothing can heartbeat while the loop is blocked, so another worker recovers the job and
runs it again: inherent to a blocked loop. What was wrong is that the blocking worker said
nothing at all: its completion was silently refused. Now it logs one line naming the block
and the fix (make the handler a plain def, which runs in a thread), and one line saying its
outcome was not written because the job is no longer its own.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = textwrap.dedent(
    """
    import asyncio, logging, os, sys, time
    from monque_engine import Monque

    url, role, marker = sys.argv[1], sys.argv[2], sys.argv[3]

    class Seen(logging.Handler):
        # Both warnings logged: A may close (its stderr still gets them, via lastResort).
        def __init__(self):
            super().__init__(logging.WARNING)
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())
            sys.stderr.write(record.getMessage() + "\\n")

    async def main():
        seen = Seen()
        logging.getLogger("monque_engine").addHandler(seen)
        m = Monque(url, poll_interval=0.05, heartbeat_interval=0.05, lock_timeout=1.0,
                   stale_recovery_interval=0.1, scheduler_instance_id=role)
        await m.initialize()
        done = asyncio.Event()

        async def handler(job):
            print(role, "start", flush=True)
            if role == "A":
                # Block the loop until B has run the job (B creates the marker file).
                while not os.path.exists(marker):
                    time.sleep(0.01)
                time.sleep(0.5)  # and block on: the block must outlast the 1 s warning threshold
            done.set()

        m.register("blocks", handler)
        if role == "A":
            await m.enqueue("blocks", {})
        async with m:
            await m.start()
            await asyncio.wait_for(done.wait(), 30)
            if role == "B":
                open(marker, "w").close()
            else:
                def both():
                    text = " ".join(seen.messages)
                    return "event loop was blocked" in text and "no longer holds it" in text
                while not both():  # the next heartbeat tick measures the block
                    await asyncio.sleep(0.01)

    asyncio.run(main())
    """
)


def test_a_handler_blocking_the_loop_past_lock_timeout_is_named_by_the_worker_it_blocked(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    marker = tmp_path / "b-ran"
    url = f"sqlite:///{db}"
    a = subprocess.Popen(
        [sys.executable, str(script), url, "A", str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert a.stdout is not None
        assert a.stdout.readline().strip() == "A start"  # A holds the job and blocks its loop
        b = subprocess.run(
            [sys.executable, str(script), url, "B", str(marker)], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert b.returncode == 0, b.stderr
        assert "B start" in b.stdout  # recovered from the blocked worker and run again
        _, err = a.communicate(timeout=60)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    assert a.returncode == 0, err
    assert "The event loop was blocked for" in err
    assert "make it a plain def, which runs in a thread" in err
    assert "running: blocks" in err
    assert "completed here, but this instance no longer holds it" in err
    assert "its outcome was not written" in err


async def test_a_blocked_loop_is_reported_once_per_block(tmp_path: Path, caplog) -> None:
    """In-process: a 1.5 s block with 0.05 s heartbeats gives one warning, not thirty."""
    import time

    from monque_engine import Monque
    from tests.conftest import SHORT_INTERVALS, EventRecorder, poll_until

    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **{**SHORT_INTERVALS, "heartbeat_interval": 0.05})
    await m.initialize()
    rec = EventRecorder().attach(m, "job:complete")
    ticks = 0
    fleet = m._lifecycle._fleet
    real_beat = fleet.beat_guarded

    async def counted_beat() -> None:
        nonlocal ticks
        ticks += 1
        await real_beat()

    fleet.beat_guarded = counted_beat  # type: ignore[method-assign]

    async def blocks(job: object) -> None:
        time.sleep(1.5)

    m.register("blocks", blocks)

    def stalls() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "event loop was blocked" in r.getMessage()]

    try:
        with caplog.at_level(logging.WARNING, logger="monque_engine"):
            job = await m.enqueue("blocks")
            await m.start()
            await rec.wait_for("job:complete", where=lambda e: e.job.id == job.id)
            await poll_until(stalls, message="the block is reported")
            seen = ticks
            await poll_until(lambda: ticks >= seen + 5, message="five more heartbeat ticks")
        assert len(stalls()) == 1
        message = stalls()[0].getMessage()
        assert "running: blocks" in message and "lock_timeout" in message
    finally:
        await m.close()
