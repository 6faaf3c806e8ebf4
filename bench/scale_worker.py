"""The second worker of the write-side measurements: ``python -m bench.scale_worker URL RATE [timed]``.

A separate process on the same file, completing about ``RATE`` jobs/s of its own name
(``scale-worker``: no job of the built mix has it), with heartbeats every
``HEARTBEAT`` seconds. It prints ``ready`` once its first job completed, then runs until a
line arrives on stdin, and answers with one JSON line of what it saw, all instants on
``time.monotonic()`` (the same clock in every process on Linux):

* ``completions``: the instant each ``job:complete`` event arrived (emitted after its commit);
* ``completion_waits``: ``(instant, seconds)`` per completion: handler return → its event
  (the completion's write, lock wait included);
* ``heartbeats``: ``(start, end)`` of each heartbeat tick's writes (``store.heartbeat`` of the
  running jobs, then the instance record ``store.upsert_instance``), one pair per tick;
* ``errors``: ``(instant, text)`` of each ``job:error`` / ``job:fail`` event and each heartbeat
  write that raised: a write that failed (e.g. "stayed locked").

``timed`` (the purge measurement, ``scale_purge``): scheduled work instead. Its jobs are
enqueued ahead of time, one due every 1/RATE s (``LEAD`` seconds of them at start, then a
second's worth every second, ``LEAD`` seconds ahead), each handler sleeps ``TIMED_HANDLER``
seconds, at concurrency ``TIMED_CONCURRENCY``: nothing is due at once, so every claim after
the first waits for a due-time timer (armed from the store's ``next_due_ms``), as scheduled
work does. The untimed worker's completions refill its slots without one.

Pacing (untimed): each job's handler waits for its slot, 1/RATE s after the previous one, so the worker
completes RATE jobs/s while nothing stalls it, and does not catch up after a stall (a slot in
the past moves to now): a stall shows as fewer completions, as it would for real work.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from monque_engine import Job, Monque

NAME = "scale-worker"
HEARTBEAT = 0.5
CONCURRENCY = 4
#: Jobs enqueued at start; a producer task then adds a second's worth every second, so the
#: file gains only what the worker drains (the later measurements' counts stay as built).
BUFFER = 3_000
#: ``timed``: seconds of future jobs kept enqueued ahead, each handler's sleep, the concurrency.
LEAD = 20.0
TIMED_HANDLER = 0.05
TIMED_CONCURRENCY = 16


async def run(url: str, rate: float, timed: bool = False) -> dict[str, Any]:
    concurrency = TIMED_CONCURRENCY if timed else CONCURRENCY
    monque = Monque(url, heartbeat_interval=HEARTBEAT, worker_concurrency=concurrency, poll_interval=1.0)
    await monque.initialize()
    completions: list[float] = []
    waits: list[tuple[float, float]] = []
    heartbeats: list[tuple[float, float]] = []
    errors: list[tuple[float, str]] = []
    returned: dict[str, float] = {}
    first = asyncio.Event()
    gap = 1.0 / rate
    next_slot = [time.monotonic()]

    async def timed_handler(job: Job) -> None:
        await asyncio.sleep(TIMED_HANDLER)
        returned[job.id] = time.monotonic()

    async def handler(job: Job) -> None:
        now = time.monotonic()
        slot = max(next_slot[0], now)
        next_slot[0] = slot + gap
        await asyncio.sleep(slot - now)
        returned[job.id] = time.monotonic()

    def completed(event: Any) -> None:
        now = time.monotonic()
        completions.append(now)
        job = getattr(event, "job", None)
        ended = returned.pop(getattr(job, "id", ""), None)
        if ended is not None:
            waits.append((now, now - ended))
        first.set()

    def failed(event: Any) -> None:
        errors.append((time.monotonic(), repr(getattr(event, "error", event))[:300]))

    monque.on("job:complete", completed)
    monque.on("job:error", failed)
    monque.on("job:fail", failed)
    store: Any = monque.store
    beat_started: list[float] = []
    plain_heartbeat, plain_upsert = store.heartbeat, store.upsert_instance

    async def heartbeat(*args: Any, **kwargs: Any) -> Any:
        beat_started.append(time.monotonic())
        try:
            return await plain_heartbeat(*args, **kwargs)
        except Exception as error:
            errors.append((time.monotonic(), f"heartbeat: {error!r}"[:300]))
            raise

    async def upsert_instance(*args: Any, **kwargs: Any) -> Any:
        started = beat_started.pop() if beat_started else time.monotonic()
        beat_started.clear()
        try:
            return await plain_upsert(*args, **kwargs)
        except Exception as error:
            errors.append((time.monotonic(), f"instance heartbeat: {error!r}"[:300]))
            raise
        finally:
            heartbeats.append((started, time.monotonic()))

    store.heartbeat, store.upsert_instance = heartbeat, upsert_instance
    origin = datetime.now(UTC) + timedelta(seconds=0.2)
    scheduled = [0]

    def batch(seconds: float) -> list[dict[str, Any]]:
        if not timed:
            return [{"name": NAME, "data": {"i": i}} for i in range(round(rate * seconds))]
        # Up to LEAD seconds past now, by the clock: a producer held up does not let the
        # schedule run dry (its jobs would stop for a reason other than the claims).
        ahead = (datetime.now(UTC) - origin).total_seconds() + LEAD
        first, scheduled[0] = scheduled[0], max(scheduled[0], round(rate * ahead))
        return [
            {"name": NAME, "data": {"i": i}, "run_at": origin + timedelta(seconds=i * gap)}
            for i in range(first, scheduled[0])
        ]

    await monque.enqueue_many(batch(LEAD if timed else BUFFER / rate))

    async def produce() -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                await monque.enqueue_many(batch(1.0))
            except Exception as error:  # noqa: BLE001 - a failed write is what we count
                errors.append((time.monotonic(), f"enqueue: {error!r}"[:300]))

    monque.register(NAME, timed_handler if timed else handler, concurrency=concurrency)
    await monque.start()
    producer = asyncio.create_task(produce())
    await first.wait()
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    producer.cancel()
    await monque.stop()
    await monque.close()
    return {
        "completions": completions,
        "completion_waits": waits,
        "heartbeats": heartbeats,
        "heartbeat_interval": HEARTBEAT,
        "errors": errors,
    }


def main() -> None:
    timed = sys.argv[3:] == ["timed"]
    print(json.dumps(asyncio.run(run(sys.argv[1], float(sys.argv[2]), timed))), flush=True)


if __name__ == "__main__":
    main()
