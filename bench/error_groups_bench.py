"""Errors view and text search at scale (issue 12): 1M jobs, 100k of them failed or retrying.

    python -m bench.error_groups_bench [--jobs 1000000] [--failures 100000] [--groups 40]

Builds a SQLite file through the store's own schema (rows written in bulk with sqlite3:
the point is the read side), then times, median of ``--repeat`` runs, on a warm cache:

* ``Monque.error_groups()``: the grouping the errors view refreshes;
* a group's listing count and first page, and its bulk retry (then delete) bounded by
  ``updated_before``;
* text search: count over the whole table, and the first page (50) for a common and a
  rare string, as the console's filter bar would ask.

Prints one line per measurement (and ``--json`` for a machine-readable summary).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from monque_engine import JobListFilter, JobSelector, Monque
from monque_engine.attempts import Attempt
from monque_engine.errorgroups import error_group_key

TRACE = "Traceback (most recent call last):\n" + "".join(
    f'  File "/srv/app/tasks/module_{n}.py", line {10 + n}, in step_{n}\n    do_step_{n}(payload)\n' for n in range(8)
)


def _build(path: str, jobs: int, failures: int, groups: int) -> list[str]:
    rng = random.Random(12)
    now = int(time.time() * 1000)
    kinds = [
        (f"task.{g % 8}", f"app.errors.Error{g}", f"order {{}} failed in shard '{{}}' ({g})") for g in range(groups)
    ]
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    sql = (
        "INSERT INTO monque_jobs (id, name, data, status, next_run_at, fail_count, fail_reason, created_at, "
        "updated_at, attempts, error_type, error_group) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
    )
    fail_every = max(1, jobs // max(1, failures))
    batch: list[tuple[Any, ...]] = []
    for i in range(jobs):
        created = now - rng.randrange(0, 7 * 24 * 3_600_000)
        customer = f"customer-{rng.randrange(100_000)}"
        data = json.dumps(
            {
                "customer": customer,
                "order": i,
                "items": [rng.randrange(1000) for _ in range(4)],
                "note": "needle-common" if i % 10 == 0 else "plain",
            }
        )
        if i % fail_every == 0 and i // fail_every < failures:
            name, etype, pattern = kinds[int(rng.paretovariate(1.2)) % groups]
            message = pattern.format(i, f"eu-{rng.randrange(9)}")
            updated = now - rng.randrange(0, 2 * 3_600_000)
            retrying = rng.random() < 0.3
            record = Attempt(
                1,
                "retrying" if retrying else "failed",
                "host-1",
                updated - 40,
                updated,
                etype,
                message,
                TRACE + f"{etype}: {message}\n",
            )
            batch.append(
                (
                    f"{i:024x}",
                    name,
                    data,
                    "pending" if retrying else "failed",
                    updated + 60_000 if retrying else created,
                    1,
                    message,
                    created,
                    updated,
                    "[" + record.to_json() + "]",
                    etype,
                    error_group_key(name, etype, message),
                )
            )
        else:
            batch.append(
                (
                    f"{i:024x}",
                    f"task.{i % 8}",
                    data,
                    "completed",
                    created,
                    0,
                    None,
                    created,
                    created + 50,
                    None,
                    None,
                    None,
                )
            )
        if len(batch) >= 20_000:
            conn.executemany(sql, batch)
            conn.commit()
            batch.clear()
    if batch:
        conn.executemany(sql, batch)
        conn.commit()
    rare = f"{jobs // 2 + 1:024x}"
    conn.execute("UPDATE monque_jobs SET data = replace(data, 'plain', 'needle-rare') WHERE id = ?", (rare,))
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()
    return []


async def _time(repeat: int, action: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = await action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, result


async def main_async(args: argparse.Namespace) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="monque-errors-") as d:
        path = os.path.join(d, "jobs.db")
        m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
        await m.initialize()
        await m.close()
        started = time.perf_counter()
        _build(path, args.jobs, args.failures, args.groups)
        print(
            f"built {args.jobs} jobs ({args.failures} failed/retrying, {args.groups} groups) "
            f"in {time.perf_counter() - started:.1f} s, {os.path.getsize(path) / 1e6:.0f} MB",
            flush=True,
        )
        m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
        await m.initialize()
        try:

            def report(key: str, ms: float, what: str) -> None:
                out[key] = round(ms, 1)
                print(f"{what:<58} {ms:9.1f} ms", flush=True)

            ms, groups = await _time(args.repeat, m.error_groups)
            report("error_groups", ms, f"error_groups() -> {len(groups)} groups, {sum(g.count for g in groups)} jobs")
            biggest = max(groups, key=lambda g: g.count)
            smallest = min((g for g in groups if g.failed), key=lambda g: g.count)
            ms, count = await _time(args.repeat, lambda: m.count_jobs(JobListFilter(error_group=biggest.key)))
            report("group_count", ms, f"count_jobs(error_group) biggest group ({count})")
            ms, _ = await _time(
                args.repeat,
                lambda: m.get_jobs_with_cursor(
                    filter=JobListFilter(error_group=biggest.key), limit=50, include_data=False
                ),
            )
            report("group_page", ms, "first page (50) of the biggest group")
            for label, text in (("common", "needle-common"), ("rare", "needle-rare"), ("none", "no-such-text")):
                ms, count = await _time(args.repeat, lambda text=text: m.count_jobs(JobListFilter(text=text)))
                report(f"text_count_{label}", ms, f"count_jobs(text={text!r}) -> {count}")
                ms, page = await _time(
                    args.repeat,
                    lambda text=text: m.get_jobs_with_cursor(
                        filter=JobListFilter(text=text), limit=50, include_data=False
                    ),
                )
                report(f"text_page_{label}", ms, f"first page (50) text={text!r} -> {len(page.jobs)}")
            ms, count = await _time(1, lambda: m.count_jobs(JobListFilter(text="shard 'eu-3'")))
            report("text_count_error", ms, f"count_jobs(text=\"shard 'eu-3'\") (error text) -> {count}")
            bound = datetime.now(UTC) + timedelta(seconds=1)
            ms, result = await _time(
                1, lambda: m.retry_jobs(JobSelector(error_group=smallest.key, updated_before=bound))
            )
            report("group_retry", ms, f"retry_jobs(error_group) smallest group ({result.count} failed jobs)")
            ms, result = await _time(
                1, lambda: m.delete_jobs(JobSelector(error_group=biggest.key, updated_before=bound))
            )
            report("group_delete", ms, f"delete_jobs(error_group) biggest group ({result.count} jobs)")
        finally:
            await m.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--failures", type=int, default=100_000)
    ap.add_argument("--groups", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
