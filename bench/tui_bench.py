"""Console benchmark: first paint on 1,000 vs 1,000,000 jobs, and a burst of 10,000 changes.

    python -m bench.tui_bench [--sizes 1000,1000000] [--burst 10000] [--dir /tmp/monque-tui-bench]

First paint: from creating the app to the first page of the jobs table on screen (headless,
including opening the store). Burst: another Monque instance changes 10,000 jobs in one
transaction; we report the time from its commit until the table shows the change, and the
time the UI spent applying it. Numbers are milliseconds; the 1M/1k ratio is printed.
Targets (issue 3): first paint <= 300 ms at any size, and no more than 2x between 1k and 1M.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import time
from pathlib import Path

from monque_engine import JobSelector, JobStatus, Monque
from monque_tui.app import MonqueConsole
from monque_tui.config import ConsoleConfig
from monque_tui.seed import COLUMNS

NOW_MS = 1_768_478_400_000


def build(path: Path, size: int) -> None:
    """Create a store with ``size`` pending jobs (ids and instants generated, no engine per row)."""
    if path.exists():
        return
    tmp = path.with_suffix(".building")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)

    async def schema() -> None:
        monque = Monque(f"sqlite:///{tmp}", recover_stale_jobs=False)
        await monque.initialize()
        await monque.close()

    asyncio.run(schema())
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    names = ["send-email", "resize-image", "webhook", "sync-crm", "report"]
    marks = ",".join("?" * len(COLUMNS))
    sql = f"INSERT INTO monque_jobs ({','.join(COLUMNS)}) VALUES ({marks})"
    batch = 50_000
    for start in range(0, size, batch):
        rows = []
        for i in range(start, min(size, start + batch)):
            created = NOW_MS - (size - i) * 10
            rows.append((f"{0x67880000 + i // 1_000_000:08x}{i:016x}", names[i % 5], json.dumps({"i": i}),
                         "pending", created + 3_600_000, None, None, None, None, 0, None, None, None, created,
                         created))
        conn.execute("BEGIN")
        conn.executemany(sql, rows)
        conn.execute("COMMIT")
    conn.execute("DELETE FROM monque_jobs_changes")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    tmp.rename(path)


async def first_paint(url: str, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        app = MonqueConsole(ConsoleConfig(url=url, read_only=True))
        async with app.run_test(size=(140, 40)):
            await app.ready.wait()
            assert app.first_paint_at is not None
            best = min(best, app.first_paint_at * 1000)
    return best


async def burst(url: str, count: int) -> tuple[float, float]:
    """Cancel ``count`` of the newest pending jobs from another instance; time until the table shows it."""
    app = MonqueConsole(ConsoleConfig(url=url, read_only=True))
    applied_ms: list[float] = []
    original = app.apply_batch

    def timed(batch):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        original(batch)
        applied_ms.append((time.perf_counter() - started) * 1000)

    app.apply_batch = timed  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40)) as pilot:
        await app.ready.wait()
        await pilot.pause()
        while app.feed is None or app.feed.state != "live":
            await asyncio.sleep(0.01)
        top = app.jobs_screen.window.rows[0].id
        other = Monque(url, recover_stale_jobs=False)
        await other.initialize()
        # The newest `count` jobs: created after the (count+1)-th newest.
        page = await other.get_jobs_with_cursor(limit=1, filter=None)
        del page
        newest = app.jobs_screen.window.rows[0].created_at
        from datetime import timedelta

        started = time.perf_counter()
        result = await other.cancel_jobs(JobSelector(status="pending",
                                                     newer_than=newest - timedelta(milliseconds=10 * count)))
        committed = time.perf_counter()
        while True:
            job = app.jobs_screen.window.get(top)
            if job is None or job.status is JobStatus.CANCELLED:
                break
            await asyncio.sleep(0.005)
        shown = (time.perf_counter() - committed) * 1000
        await other.close()
        assert result.count >= count * 0.9, result
        del started
    return shown, sum(applied_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,1000000")
    parser.add_argument("--burst", type=int, default=10_000)
    parser.add_argument("--dir", default="/tmp/monque-tui-bench")
    args = parser.parse_args()
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, tuple[float, float, float]] = {}
    for size in sizes:
        path = directory / f"jobs-{size}.db"
        t = time.perf_counter()
        build(path, size)
        print(f"store with {size:,} jobs ready ({time.perf_counter() - t:.1f} s)", flush=True)
        work = directory / f"work-{size}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{work}{suffix}").unlink(missing_ok=True)
        work.write_bytes(path.read_bytes())
        url = f"sqlite:///{work}"
        paint = asyncio.run(first_paint(url))
        shown, applied = asyncio.run(burst(url, min(args.burst, size)))
        results[size] = (paint, shown, applied)
        print(f"{size:>10,} jobs: first paint {paint:7.1f} ms | burst of {min(args.burst, size):,} changes: "
              f"on screen {shown:7.1f} ms after commit, UI apply time {applied:6.1f} ms", flush=True)
    if len(sizes) >= 2:
        small, large = results[sizes[0]], results[sizes[-1]]
        print(f"first paint ratio {sizes[-1]:,}/{sizes[0]:,}: {large[0] / small[0]:.2f}x (target <= 2x, <= 300 ms)")


if __name__ == "__main__":
    main()
