"""The management API's reads on a big store, beside the console's own reads, in one run.

``python -m bench.api_reads URL [--runs N] [--from ISO]`` opens the store once (a copy: a
cache file of an older schema is migrated on open), then times, alternating so both see the
same cache state and machine load:

* ``GET /api/v1/jobs`` (a page of 50, unfiltered, newest first) through the core
  (``ManagementApi.handle``: parse, validate, read, map, validate the response, JSON), and the
  console's read of the same page (``get_jobs_with_cursor`` as its session calls it, rows
  without payloads);
* the same, filtered by name + status + ``updatedAtFrom``;
* ``GET /api/v1/jobs/stats`` and the console's ``get_queue_stats()``.

The stats cache is off (``stats_cache_ttl=0``) so every stats call reads the store. Prints
p50 / p95 in ms per read and the API's p95 over the console's (a ratio measured in one run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from monque_engine import JobListFilter, JobSort, JobStatus, Monque
from monque_engine.management import ApiRequest, ManagementApi

NAME = "send-email"
NEWEST = JobSort("created_at", "desc")


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def measure(url: str, runs: int, since: str | None) -> dict[str, Any]:
    monque = Monque(url, recover_stale_jobs=False, stats_cache_ttl=0)
    started = time.perf_counter()
    await monque.initialize()
    opened = time.perf_counter() - started
    api = ManagementApi(monque)
    if since is None:  # the newest hour of history
        newest = (await monque.get_jobs_with_cursor(limit=1, sort=JobSort("updated_at", "desc"))).jobs[0]
        since = (
            (datetime.fromtimestamp(newest.updated_at_ms / 1000, UTC) - timedelta(hours=1))
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    filtered = JobListFilter(name=NAME, status=JobStatus.FAILED, updated_at_from=datetime.fromisoformat(since))
    query = [("name", NAME), ("status", "failed"), ("updatedAtFrom", since)]

    async def get(path: str, pairs: list[tuple[str, str]]) -> None:
        answer = await api.handle(ApiRequest("GET", path, pairs))
        assert answer.status == 200, answer.body
        answer.json_bytes()  # what an adapter writes

    pairs: dict[str, tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]] = {
        "jobs, page of 50, unfiltered": (
            lambda: get("/api/v1/jobs", [("limit", "50")]),
            lambda: monque.get_jobs_with_cursor(None, 50, "forward", JobListFilter(), NEWEST, include_data=False),
        ),
        "jobs, name + status + updatedAtFrom": (
            lambda: get("/api/v1/jobs", [*query, ("limit", "50")]),
            lambda: monque.get_jobs_with_cursor(None, 50, "forward", filtered, NEWEST, include_data=False),
        ),
        "jobs/stats": (lambda: get("/api/v1/jobs/stats", []), monque.get_queue_stats),
    }
    matched = len((await monque.get_jobs_with_cursor(None, 50, "forward", filtered, NEWEST)).jobs)
    out: dict[str, Any] = {"open_s": round(opened, 2), "since": since, "filtered_rows": matched, "reads": {}}
    try:
        for label, (api_call, console_call) in pairs.items():
            for _ in range(3):  # warm both
                await api_call()
                await console_call()
            api_ms: list[float] = []
            console_ms: list[float] = []
            for _ in range(runs):
                api_ms.append(await _timed(api_call))
                console_ms.append(await _timed(console_call))
            out["reads"][label] = {
                "api_p50": round(statistics.median(api_ms), 2),
                "api_p95": round(_p(api_ms, 0.95), 2),
                "console_p50": round(statistics.median(console_ms), 2),
                "console_p95": round(_p(console_ms, 0.95), 2),
                "ratio_p95": round(_p(api_ms, 0.95) / _p(console_ms, 0.95), 2),
            }
    finally:
        await monque.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.api_reads", description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--from", dest="since", default=None, help="updatedAtFrom (default: the newest hour)")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.url, args.runs, args.since))
    print(json.dumps(result, indent=1), flush=True)
    for label, row in result["reads"].items():
        print(
            f"{label:40} API p50 {row['api_p50']:7.2f} p95 {row['api_p95']:7.2f} ms | console p50 "
            f"{row['console_p50']:7.2f} p95 {row['console_p95']:7.2f} ms | API/console p95 {row['ratio_p95']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
