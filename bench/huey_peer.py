"""huey's ``SqliteHuey``: the peer people reach for as an embedded SQLite queue.

Three configurations:
  * ``default``: ``SqliteHuey(filename=…)`` exactly as shipped. huey 3.x passes
    ``fsync=None``, so it issues no ``PRAGMA synchronous`` at all and SQLite's compiled-in
    default applies; we read the pragma back from huey's own connection and report it
    (on this machine's stdlib sqlite that is FULL, not OFF).
  * ``lfl`` (like-for-like): the same journal (WAL) and ``synchronous=NORMAL`` as our
    default. ``fsync=False`` would mean synchronous=OFF, so a small ``SqliteStorage``
    subclass sets NORMAL on every connection it opens.
  * ``tuned``: like-for-like storage, and the consumer's polling at its fastest, as
    ``huey_consumer -d 0.001 -m 0.01`` sets it (``Consumer(initial_delay=0.001,
    max_delay=0.01)``): an idle worker thread polls again after 1 ms, backing off to 10 ms at
    most, instead of 100 ms backing off to 10 s. huey at its best on this machine (issue 26).

Each run: a fresh file; ``N`` single task calls one after another (huey's enqueue rate);
then an in-process ``Consumer(workers=W, worker_type='thread')`` with its other defaults,
timed from ``consumer.start()`` until the task body has run ``N`` times (a lock-protected
counter the task increments; polled every 1 ms). huey deletes each task row as it
dequeues it, so "executed" is the only completion it records.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from .common import Record, durability_label, fresh_dir


def _storage_class(synchronous: str | None):
    from huey.storage import SqliteStorage

    if synchronous is None:
        return SqliteStorage

    level = {"off": 0, "normal": 1, "full": 2}[synchronous]

    class SyncSqliteStorage(SqliteStorage):
        def _create_connection(self):
            conn = super()._create_connection()
            conn.execute(f"pragma synchronous={level}")
            return conn

    return SyncSqliteStorage


#: The consumer's polling per mode: (initial_delay, max_delay) in seconds; huey's own defaults
#: (0.1, 10.0) where absent.
POLLING = {"tuned": (0.001, 0.01)}
LABELS = {"default": "defaults", "lfl": "like-for-like", "tuned": "like-for-like, polling -d 0.001 -m 0.01"}


def run(mode: str, workers: int, jobs: int) -> list[Record]:
    from huey import SqliteHuey
    from huey.consumer import Consumer

    logging.getLogger("huey").setLevel(logging.WARNING)
    synchronous = None if mode == "default" else "normal"
    label = LABELS[mode]
    polling = POLLING.get(mode)
    consumer_options = {} if polling is None else {"initial_delay": polling[0], "max_delay": polling[1]}
    with fresh_dir(f"huey-{mode}-w{workers}") as d:
        huey = SqliteHuey(
            f"bench-{mode}", filename=os.path.join(d, "huey.db"), storage_class=_storage_class(synchronous)
        )
        conn = huey.storage.conn
        sync_value = conn.execute("pragma synchronous").fetchone()[0]
        journal = conn.execute("pragma journal_mode").fetchone()[0]
        dur = durability_label(sync_value, journal)

        lock = threading.Lock()
        count = [0]

        @huey.task()
        def noop(i):
            with lock:
                count[0] += 1

        started = time.perf_counter()
        for i in range(jobs):
            noop(i)
        enqueue_rate = jobs / (time.perf_counter() - started)
        queued = huey.pending_count()
        if queued != jobs:
            raise RuntimeError(f"huey queued {queued} of {jobs}")

        consumer = Consumer(huey, workers=workers, worker_type="thread", **consumer_options)
        started = time.perf_counter()
        consumer.start()
        deadline = started + max(120.0, jobs / 500)
        while count[0] < jobs:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"huey executed only {count[0]} of {jobs} before the deadline")
            time.sleep(0.001)
        elapsed = time.perf_counter() - started
        consumer.stop(graceful=True)
        left = huey.pending_count()
        huey.storage.close()

    delays = "" if polling is None else f", initial_delay={polling[0]}, max_delay={polling[1]}"
    settings = f"SqliteHuey {label}; Consumer workers={workers}, thread{delays}; {jobs} jobs"
    notes = [] if left == 0 else [f"{left} tasks still queued after the run"]
    return [
        Record(
            key=f"huey.{mode}.enqueue.w{workers}",
            subject="huey SqliteHuey",
            measure="single enqueue (task call)",
            durability=dur,
            value=enqueue_rate,
            unit="jobs/s",
            settings=f"SqliteHuey {label}; {jobs} calls",
            extra={"workers": workers},
        ),
        Record(
            key=f"huey.{mode}.drain.w{workers}",
            subject="huey SqliteHuey",
            measure="drain backlog",
            durability=dur,
            value=jobs / elapsed,
            unit="jobs/s",
            settings=settings,
            notes=notes,
            extra={"workers": workers},
        ),
    ]
