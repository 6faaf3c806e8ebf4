"""``monque-tui --demo``: a living queue on a local SQLite file, so a newcomer sees one in seconds.

The demo is an ordinary app as far as the engine is concerned: ``setup(monque)`` registers
handlers, schedules a recurring job and starts a producer. The console (``--demo``) and
the headless runner (``--demo --headless``) both use it, and so can anyone:
``monque-tui --worker --app monque_tui.demo.app:setup sqlite:///monque-demo.db``.

Handlers (names read like a small web shop):

* ``email.send``      fast, 50-300 ms
* ``image.resize``    medium, 0.3-1.5 s
* ``report.generate`` slow, 2-5 s
* ``webhook.deliver`` fails about half the time (retries with backoff, some fail for good)
* ``metrics.rollup``  recurring every 5 s (6-field cron with seconds), one per queue thanks
  to its ``unique_key``, so restarting the demo does not add a second schedule
"""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import timedelta
from typing import Any

from monque_engine import ConnectionError, Job, JobRetention, Monque, MonqueError, StoreLostError

log = logging.getLogger("monque_tui.demo")

#: Engine options for the demo: few retries with short backoff so failures show up as
#: ``failed`` within a minute, a short lock timeout so a killed demo's jobs come back
#: quickly, and retention so a demo database left running does not grow without bound.
DEMO_OPTIONS: dict[str, Any] = {
    "max_retries": 3,
    "base_retry_interval": 2.0,
    "lock_timeout": 60.0,
    "shutdown_timeout": 10.0,
    # The engine's safety poll arms timers for future jobs; 5 s (not 30) makes the first
    # run of the recurring job and of delayed jobs enqueued before start() happen on time.
    "safety_poll_interval": 5.0,
    "job_retention": JobRetention(completed=600.0, failed=3600.0, interval=60.0),
}

RECURRING_NAME = "metrics.rollup"
RECURRING_CRON = "*/5 * * * * *"
RECURRING_KEY = "demo:metrics.rollup"

_CUSTOMERS = ("ada", "grace", "linus", "margaret", "ken", "barbara", "dennis", "frances")
_TEMPLATES = ("welcome", "receipt", "password-reset", "weekly-digest")
_REPORTS = ("sales-daily", "inventory", "churn", "funnel")
_ENDPOINTS = ("https://hooks.example.com/orders", "https://crm.example.org/events", "https://status.example.net/ping")


# -- handlers -------------------------------------------------------------------------------------
async def send_email(job: Job) -> None:
    await asyncio.sleep(random.uniform(0.05, 0.3))


async def resize_image(job: Job) -> None:
    await asyncio.sleep(random.uniform(0.3, 1.5))


async def generate_report(job: Job) -> None:
    await asyncio.sleep(random.uniform(2.0, 5.0))


async def deliver_webhook(job: Job) -> None:
    await asyncio.sleep(random.uniform(0.1, 0.6))
    if random.random() < 0.5:
        endpoint = (job.data or {}).get("url", "endpoint") if isinstance(job.data, dict) else "endpoint"
        raise RuntimeError(
            random.choice(
                (
                    f"POST {endpoint} returned 503 Service Unavailable",
                    f"POST {endpoint} timed out after 5 s",
                    f"POST {endpoint} returned 429 Too Many Requests",
                )
            )
        )


async def rollup_metrics(job: Job) -> None:
    await asyncio.sleep(random.uniform(0.05, 0.2))


#: Every job the demo makes carries this in its payload: ``--demo URL`` runs on a store only
#: while every job there has it, so a store of an application's own jobs with the demo's
#: names (the README tour's ``email.send``) is refused (a docs probe: it ran the demo's
#: handlers and its retention on one).
DEMO_MARK_KEY = "demo"


def marked(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, DEMO_MARK_KEY: True}


HANDLERS = {
    "email.send": (send_email, 4),
    "image.resize": (resize_image, 3),
    "report.generate": (generate_report, 2),
    "webhook.deliver": (deliver_webhook, 3),
    RECURRING_NAME: (rollup_metrics, 1),
}


# -- the trickle and the bursts ---------------------------------------------------------------------
def random_job(rng: random.Random) -> tuple[str, dict[str, Any]]:
    roll = rng.random()
    customer = rng.choice(_CUSTOMERS)
    if roll < 0.45:
        return "email.send", {"to": f"{customer}@example.com", "template": rng.choice(_TEMPLATES)}
    if roll < 0.7:
        return "image.resize", {"image": f"uploads/{customer}/{rng.randint(1000, 9999)}.jpg", "sizes": [128, 512, 1024]}
    if roll < 0.85:
        return "webhook.deliver", {
            "url": rng.choice(_ENDPOINTS),
            "event": "order.paid",
            "order": rng.randint(10_000, 99_999),
        }
    return "report.generate", {"report": rng.choice(_REPORTS), "requested_by": customer}


class DemoProducer:
    """Enqueues a steady trickle and, now and then, a burst, until the engine stops.

    It watches ``monque.is_running``: once the pool has run and stopped, the producer ends
    on its own, so neither the console nor the headless runner has to know it exists.
    """

    def __init__(
        self,
        monque: Monque,
        *,
        seed: int | None = None,
        trickle: tuple[float, float] = (0.3, 1.5),
        burst_every: tuple[float, float] = (20.0, 45.0),
    ) -> None:
        self.monque = monque
        self.rng = random.Random(seed)
        self.trickle = trickle
        self.burst_every = burst_every
        self.enqueued = 0
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run(), name="monque-demo-producer")

    async def seed(self, count: int = 12) -> None:
        """A first handful, some due later, so the tables have rows the moment they open."""
        for index in range(count):
            name, data = random_job(self.rng)
            delay = timedelta(seconds=self.rng.uniform(5, 60)) if index % 4 == 3 else None
            await self.monque.enqueue(name, marked(data), run_at=delay)
            self.enqueued += 1

    async def _run(self) -> None:
        seen_running = False
        loop = asyncio.get_running_loop()
        next_burst = loop.time() + self.rng.uniform(*self.burst_every) / 2
        while True:
            await asyncio.sleep(self.rng.uniform(*self.trickle))
            if self.monque.is_running:
                seen_running = True
            elif seen_running:
                return  # the pool stopped: the app is shutting down
            else:
                continue  # not started yet
            try:
                if loop.time() >= next_burst:
                    await self._burst()
                    next_burst = loop.time() + self.rng.uniform(*self.burst_every)
                else:
                    name, data = random_job(self.rng)
                    delay = timedelta(seconds=self.rng.uniform(3, 30)) if self.rng.random() < 0.1 else None
                    await self.monque.enqueue(name, marked(data), run_at=delay)
                    self.enqueued += 1
            except StoreLostError:
                return  # for good (the file was deleted or replaced): the worker says so and stops
            except ConnectionError as error:
                if not self.monque.is_running:
                    return  # closed under us during shutdown
                log.warning("demo producer: store error, retrying: %s", " ".join(str(error).split()))
            except MonqueError as error:
                log.warning("demo producer: enqueue failed: %s", " ".join(str(error).split()))

    async def _burst(self) -> None:
        size = self.rng.randint(20, 60)
        name = self.rng.choice(("email.send", "image.resize"))
        items = [{"name": name, "data": marked(self._burst_data(name))} for _ in range(size)]
        await self.monque.enqueue_many(items)
        self.enqueued += size
        log.info("demo burst: %d %s jobs", size, name)

    def _burst_data(self, name: str) -> dict[str, Any]:
        if name == "email.send":
            return {"to": f"{self.rng.choice(_CUSTOMERS)}@example.com", "template": "weekly-digest"}
        return {"image": f"uploads/batch/{self.rng.randint(1000, 9999)}.jpg", "sizes": [128, 512]}


async def setup(monque: Monque) -> None:
    """Register the demo handlers, schedule the recurring job, seed a few jobs, start the producer."""
    for name, (handler, concurrency) in HANDLERS.items():
        monque.register(name, handler, concurrency=concurrency)
    await monque.schedule(RECURRING_CRON, RECURRING_NAME, marked({"window": "5s"}), unique_key=RECURRING_KEY)
    producer = DemoProducer(monque)
    await producer.seed()
    producer.start()
    _producers.add(producer)  # keep a reference: a task nobody holds can be garbage collected
    if producer.task is not None:
        producer.task.add_done_callback(lambda _t: _producers.discard(producer))


_producers: set[DemoProducer] = set()
