"""Our engine, ``monque_engine``, on its embedded SQLite store.

Measures (each on a fresh file, durability from the URL: ``sqlite:///path`` is WAL +
synchronous=NORMAL, ``sqlite:///path?synchronous=full`` fsyncs every commit; the value is
read back from the store's write connection and reported):

  drain        a backlog of N no-op ``async def`` jobs (inserted with ``enqueue_many``
               before the clock starts) drained by one process. Timed from ``start()``
               until ``store.stats(name)`` reports all N completed. To keep the stats
               query (a GROUP BY over the whole table) from competing with the drain, the
               bench counts ``job:complete`` events (emitted after the completion is
               committed) and only then polls ``store.stats`` every 2 ms until the store
               agrees; the end time is the store's confirmation. ``--drain-wait stats``
               polls the store every 5 ms from the start instead. Run once per worker
               concurrency; the report takes the best.
  enqueue      ``await m.enqueue(name, data)`` N times one after another (not started).
  enqueue_many ``await m.enqueue_many(batch)`` with batches of 1000 (the item dicts are
               built inside the timed loop).
  latency      two processes on one file: a worker process (``python -m
               bench.monque_engine_bench latency-worker …``; started, idle,
               ``poll_interval=60`` so only the change feed can wake it) and this process
               as the producer, enqueuing one job every 20 ms with ``time.time()`` in the
               payload. The handler records ``time.time() - payload time`` at its start.
               Ten warm-up jobs are sent first and not counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

from .common import Record, durability_label, fresh_dir, percentile

NAME = "noop"
WARMUP = 10


def _url(path: str, synchronous: str) -> str:
    url = f"sqlite:///{os.path.abspath(path)}"  # absolute path → four slashes
    return url if synchronous == "normal" else f"{url}?synchronous={synchronous}"


async def _durability(m) -> str:
    try:
        value = await m.store.execute_write(lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0])
        journal = await m.store.execute_read(lambda conn: conn.execute("PRAGMA journal_mode").fetchone()[0])
        return durability_label(value, journal)
    except Exception as error:  # noqa: BLE001
        return f"(unverified: {error})"


class _Watch:
    """Counts outcome events so errors under load are reported, not hidden."""

    def __init__(self, m, target: int) -> None:
        self.completed = 0
        self.failed = 0
        self.errors = 0
        self.first_errors: list[str] = []
        self.target = target
        self.done = asyncio.Event()
        m.on("job:complete", self._complete)
        m.on("job:fail", self._fail)
        m.on("job:error", self._error)

    def _complete(self, _event) -> None:
        self.completed += 1
        if self.completed >= self.target:
            self.done.set()

    def _fail(self, event) -> None:
        self.failed += 1
        if len(self.first_errors) < 3:
            self.first_errors.append(f"job:fail {getattr(event, 'error', event)!r}")

    def _error(self, event) -> None:
        self.errors += 1
        if len(self.first_errors) < 3:
            self.first_errors.append(f"job:error {getattr(event, 'error', event)!r}")

    def notes(self) -> list[str]:
        out = []
        if self.failed or self.errors:
            out.append(f"{self.failed} job:fail and {self.errors} job:error events; first: {self.first_errors}")
        return out


async def _noop(_job) -> None:
    return None


async def drain(
    synchronous: str, jobs: int, concurrency: int, wait: str = "events", metrics: bool = False
) -> list[Record]:
    """A backlog of no-op jobs drained by one process. ``metrics``: with the Prometheus
    collector registered and scraped every 0.5 s from another thread, as a worker started
    with ``--metrics`` is (issue 29: the drain may not drop more than 3 % with it)."""
    from monque_engine import Monque

    label = "metrics" if metrics else "drain"
    with fresh_dir(f"ours-{label}-{synchronous}-c{concurrency}") as d:
        m = Monque(_url(os.path.join(d, "jobs.db"), synchronous), worker_concurrency=concurrency)
        await m.initialize()
        dur = await _durability(m)
        for start in range(0, jobs, 1000):
            await m.enqueue_many([{"name": NAME, "data": {"i": i}} for i in range(start, min(jobs, start + 1000))])
        before = await m.store.stats(NAME)
        if before.pending != jobs:
            raise RuntimeError(f"backlog has {before.pending} pending jobs, expected {jobs}")
        m.register(NAME, _noop, concurrency=concurrency)
        stop_scraping = threading.Event()
        if metrics:
            from prometheus_client import CollectorRegistry, generate_latest

            registry = CollectorRegistry()
            registry.register(m.metrics())

            def scrape() -> None:
                while not stop_scraping.wait(0.5):
                    generate_latest(registry)

            threading.Thread(target=scrape, name="bench-scraper", daemon=True).start()
        watch = _Watch(m, jobs)
        timeout = max(120.0, jobs / 200)
        polls = 0
        threads = _ThreadCpu()
        started = time.perf_counter()
        await m.start()
        try:
            if wait == "events":
                await asyncio.wait_for(watch.done.wait(), timeout)
                interval = 0.002
            else:
                interval = 0.005
            while True:
                stats = await m.store.stats(NAME)
                polls += 1
                if stats.completed >= jobs:
                    break
                if time.perf_counter() - started > timeout:
                    raise RuntimeError(f"drain timed out: {stats}")
                await asyncio.sleep(interval)
            elapsed = time.perf_counter() - started
            cpu = threads.per_job(jobs)
        finally:
            stop_scraping.set()
            await m.stop()
            await m.close()
    notes = watch.notes()
    notes.append(_ThreadCpu.note(cpu))
    if stats.completed != jobs or stats.failed:
        notes.append(f"store stats at end: {stats}")
    return [
        Record(
            key=f"ours.{label}.{synchronous}.c{concurrency}",
            subject="monque_engine" + (" with metrics scraped every 0.5 s" if metrics else ""),
            measure="drain backlog",
            durability=dur,
            value=jobs / elapsed,
            unit="jobs/s",
            settings=f"1 process, worker_concurrency={concurrency}, {jobs} jobs, wait={wait}",
            notes=notes,
            extra={"concurrency": concurrency, "stats_polls": polls, "jobs": jobs, "cpu_us_per_job": cpu},
        )
    ]


class _ThreadCpu:
    """CPU time per job, split by thread, from ``/proc/self/task/*/stat`` (user + system).

    Threads are named from ``threading`` (each native id's Python thread name, numbered
    suffixes folded: ``monque-sqlite-read-0`` and ``-1`` are one ``monque-sqlite-read``);
    ``loop`` is the thread running the event loop (this one), ``others (exited)`` is what the
    process used beyond the threads still alive at the end (executor threads that ended, and
    the clock's rounding: /proc counts in ticks of 10 ms, 0.5 µs/job at 20k jobs).
    """

    def __init__(self) -> None:
        import threading

        self._loop = threading.get_native_id()
        self._start = self._read()
        self._process = time.process_time()

    @staticmethod
    def _read() -> dict[int, float]:
        tick = os.sysconf("SC_CLK_TCK")
        out: dict[int, float] = {}
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:  # ended while listed
                continue
            out[int(task)] = (int(fields[11]) + int(fields[12])) / tick
        return out

    def _label(self, tid: int, names: dict[int | None, str]) -> str:
        if tid == self._loop:
            return "loop"
        name = names.get(tid, f"thread {tid}")
        if name.startswith("monque-sqlite-write"):
            return "store writer"
        return name.rstrip("0123456789").rstrip("-_") or name

    def per_job(self, jobs: int) -> dict[str, float]:
        import threading

        end = self._read()
        process = time.process_time() - self._process
        names = {t.native_id: t.name for t in threading.enumerate()}
        out: dict[str, float] = {}
        for tid, seconds in end.items():
            used = seconds - self._start.get(tid, 0.0)
            label = self._label(tid, names)
            if used > 0 or label in ("loop", "store writer"):  # those two always shown, even at 0
                out[label] = out.get(label, 0.0) + used * 1e6 / jobs
        out["others (exited)"] = max(0.0, process * 1e6 / jobs - sum(out.values()))
        out["total"] = process * 1e6 / jobs
        return {k: round(v, 2) for k, v in out.items()}

    @staticmethod
    def note(cpu: dict[str, float]) -> str:
        parts = [f"{name} {value:.1f}" for name, value in cpu.items() if name != "total"]
        return f"CPU {cpu['total']:.1f} µs/job by thread: " + ", ".join(parts)


class _CpuClock:
    """CPU time per job of the whole process, the loop thread and the store's write thread.

    Wall figures on a shared machine move with the neighbours' load; CPU per job does much
    less, and shows which thread a change moved work to (ADR 0001, addendum 3b)."""

    def __init__(self) -> None:
        import threading

        writers = [t for t in threading.enumerate() if t.name.startswith("monque-sqlite-write")]
        self._writer = writers[0].ident if writers else None
        self._start = self._read()

    def _read(self) -> tuple[float, float, float | None]:
        writer = None
        if self._writer is not None:
            try:
                writer = time.clock_gettime(time.pthread_getcpuclockid(self._writer))
            except (AttributeError, OSError):  # not on this platform, or the thread is gone
                writer = None
        return time.process_time(), time.thread_time(), writer

    def per_job(self, jobs: int) -> dict[str, float]:
        end = self._read()
        out = {
            "cpu_us_per_job": (end[0] - self._start[0]) * 1e6 / jobs,
            "loop_cpu_us_per_job": (end[1] - self._start[1]) * 1e6 / jobs,
        }
        if end[2] is not None and self._start[2] is not None:
            out["writer_cpu_us_per_job"] = (end[2] - self._start[2]) * 1e6 / jobs
        return out

    @staticmethod
    def note(cpu: dict[str, float]) -> str:
        parts = [f"CPU {cpu['cpu_us_per_job']:.1f} µs/job (loop thread {cpu['loop_cpu_us_per_job']:.1f}"]
        if "writer_cpu_us_per_job" in cpu:
            parts.append(f", write thread {cpu['writer_cpu_us_per_job']:.1f}")
        return "".join(parts) + ")"


async def enqueue_single(synchronous: str, jobs: int) -> list[Record]:
    from monque_engine import Monque

    with fresh_dir(f"ours-enqueue-{synchronous}") as d:
        m = Monque(_url(os.path.join(d, "jobs.db"), synchronous))
        await m.initialize()
        dur = await _durability(m)
        clock = _CpuClock()
        started = time.perf_counter()
        for i in range(jobs):
            await m.enqueue(NAME, {"i": i})
        # Timed until every job is in the job table: a write transaction moves the inbox's last
        # rows first thing (inbox.py; reads never move them), so the move is part of the figure.
        await m.store.execute_write(lambda conn: None)
        elapsed = time.perf_counter() - started
        stats = await m.store.stats(NAME)
        cpu = clock.per_job(jobs)
        await m.close()
    notes = [] if stats.pending == jobs else [f"store has {stats.pending} pending, expected {jobs}"]
    notes.append(_CpuClock.note(cpu))
    return [
        Record(
            key=f"ours.enqueue.{synchronous}",
            subject="monque_engine",
            measure="single enqueue (awaited in turn)",
            durability=dur,
            value=jobs / elapsed,
            unit="jobs/s",
            settings=f"{jobs} calls",
            notes=notes,
            extra=cpu,
        )
    ]


async def enqueue_many(synchronous: str, jobs: int, batch: int = 1000) -> list[Record]:
    from monque_engine import Monque

    with fresh_dir(f"ours-many-{synchronous}") as d:
        m = Monque(_url(os.path.join(d, "jobs.db"), synchronous))
        await m.initialize()
        dur = await _durability(m)
        clock = _CpuClock()
        started = time.perf_counter()
        for start in range(0, jobs, batch):
            await m.enqueue_many([{"name": NAME, "data": {"i": i}} for i in range(start, min(jobs, start + batch))])
        elapsed = time.perf_counter() - started
        cpu = clock.per_job(jobs)
        stats = await m.store.stats(NAME)
        await m.close()
    notes = [] if stats.pending == jobs else [f"store has {stats.pending} pending, expected {jobs}"]
    notes.append(_CpuClock.note(cpu))
    return [
        Record(
            key=f"ours.many.{synchronous}",
            subject="monque_engine",
            measure=f"enqueue_many (batches of {batch})",
            durability=dur,
            value=jobs / elapsed,
            unit="jobs/s",
            settings=f"{jobs} jobs",
            notes=notes,
            extra=cpu,
        )
    ]


# -- cross-process latency ------------------------------------------------------------------------
async def _latency_worker(url: str, out: str, expect: int) -> None:
    from monque_engine import Monque

    latencies: list[float] = []
    done = asyncio.Event()

    async def handler(job) -> None:
        now = time.time()
        if job.data.get("warm"):
            return
        latencies.append((now - job.data["t"]) * 1000)
        if len(latencies) >= expect:
            done.set()

    m = Monque(url, poll_interval=60.0, safety_poll_interval=600.0, worker_concurrency=5)
    await m.initialize()
    m.register(NAME, handler)
    await m.start()
    with open(out + ".ready", "w") as f:
        f.write(str(os.getpid()))
    try:
        await asyncio.wait_for(done.wait(), timeout=60 + expect * 0.2)
    except TimeoutError:
        pass
    await m.stop()
    await m.close()
    with open(out, "w") as f:
        json.dump({"latencies_ms": latencies}, f)


async def latency(synchronous: str, count: int, gap: float) -> list[Record]:
    from monque_engine import Monque

    with fresh_dir(f"ours-latency-{synchronous}") as d:
        url = _url(os.path.join(d, "jobs.db"), synchronous)
        # Create the file and schema first so the two processes do not race to do it.
        m = Monque(url)
        await m.initialize()
        dur = await _durability(m)
        out = os.path.join(d, "latency.json")
        worker = subprocess.Popen(
            [sys.executable, "-m", "bench.monque_engine_bench", "latency-worker", url, out, str(count)],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(out + ".ready"):
                if worker.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("latency worker did not start")
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)
            for _ in range(WARMUP):
                await m.enqueue(NAME, {"t": time.time(), "warm": True})
                await asyncio.sleep(gap)
            for i in range(count):
                await m.enqueue(NAME, {"t": time.time(), "i": i})
                await asyncio.sleep(gap)
            rc = await asyncio.to_thread(worker.wait, 60 + count * 0.2)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        await m.close()
        with open(out) as f:
            lat = json.load(f)["latencies_ms"]
    notes = [] if len(lat) == count and rc == 0 else [f"worker saw {len(lat)} of {count} jobs, exit {rc}"]
    settings = f"2 processes, {count} jobs {gap * 1000:.0f} ms apart (+{WARMUP} warm-up), worker poll_interval=60 s"
    common = dict(
        subject="monque_engine",
        durability=dur,
        unit="ms",
        settings=settings,
        notes=notes,
        extra={"max_ms": max(lat) if lat else None, "n": len(lat)},
    )
    return [
        Record(
            key=f"ours.latency_p50.{synchronous}",
            measure="enqueue→start latency p50 (cross-process)",
            value=percentile(lat, 50),
            **common,
        ),
        Record(
            key=f"ours.latency_p99.{synchronous}",
            measure="enqueue→start latency p99 (cross-process)",
            value=percentile(lat, 99),
            **common,
        ),
    ]


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "latency-worker":
        asyncio.run(_latency_worker(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    else:
        sys.exit("usage: python -m bench.monque_engine_bench latency-worker URL OUT COUNT")
