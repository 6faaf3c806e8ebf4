"""Text search at scale (issue 25, ADR 0008): what searching values as typed costs at 1M jobs.

    python -m bench.text_search_bench [--jobs 1000000] [--db FILE] [--repeat 3] [--json]

Builds a SQLite file through the store's own schema, with payloads encoded as the engine
encodes them (``encode_payload``: compact JSON, non-ASCII as is), ~120 bytes each: 10 % hold
``needle-common`` and ``big order``, 10 % a two-line address (a newline: escaped ``\\n`` in
the JSON text, so those rows take the decoding check), 2 % a Windows path (backslashes), one
``needle-rare``, and 10 % a failReason. Then times, median of ``--repeat`` runs on a warm
cache, ``count_jobs`` and the first page (50, no payloads, as the console asks) for a set of
needles chosen to hit each path of the predicate. ``--db`` keeps the file (built once, then
reused), so the same file can be timed with another checkout on ``PYTHONPATH``.
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
from typing import Any

from monque_engine import JobListFilter, Monque
from monque_engine.validation import encode_payload

#: (label, needle): each reaches a different path (see ``monque_engine.textsearch``).
NEEDLES = [
    ("common", "needle-common"),  # 10 %: LIKE, then only rows holding a backslash are decoded
    ("rare", "needle-rare"),  # one row: a full LIKE scan
    ("none", "no-such-text"),
    ("space", "big order"),  # 10 %, a space: every LIKE match is decoded
    ("newline", "St\nSpring"),  # 10 %, every candidate holds a backslash: decoded (a newline alone is blank: refused)
    ("backslash", "\\"),  # 2 %
    ("letter", "n"),  # in nearly every row: LIKE matches all, 12 % are decoded
    ("error", "timed out"),  # failReason only
]


def build(path: str, jobs: int) -> None:
    rng = random.Random(25)
    now = int(time.time() * 1000)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    sql = (
        "INSERT INTO monque_jobs (id, name, data, status, next_run_at, fail_count, fail_reason, created_at, "
        "updated_at) VALUES (?,?,?,?,?,?,?,?,?)"
    )
    batch: list[tuple[Any, ...]] = []
    for i in range(jobs):
        created = now - rng.randrange(0, 7 * 24 * 3_600_000)
        data: dict[str, Any] = {
            "customer": f"customer-{rng.randrange(100_000)}",
            "order": i,
            "items": [rng.randrange(1000) for _ in range(4)],
            "note": "needle-common" if i % 10 == 0 else "plain",
        }
        if i % 10 == 0:
            data["tag"] = "big order"
        if i % 10 == 3:
            data["address"] = f"{rng.randrange(999)} Main St\nSpringfield"
        if i % 50 == 7:
            data["path"] = f"C:\\exports\\{i}.csv"
        failed = i % 10 == 5
        batch.append(
            (
                f"{i:024x}",
                f"task.{i % 8}",
                encode_payload(data, None),
                "failed" if failed else "completed",
                created,
                1 if failed else 0,
                f"SMTP relay timed out after {rng.randrange(30)} s" if failed else None,
                created,
                created + 50,
            )
        )
        if len(batch) >= 20_000:
            conn.executemany(sql, batch)
            conn.commit()
            batch.clear()
    if batch:
        conn.executemany(sql, batch)
        conn.commit()
    conn.execute(
        "UPDATE monque_jobs SET data = replace(data, 'plain', 'needle-rare') WHERE id = ?", (f"{jobs // 2 + 1:024x}",)
    )
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()


async def _time(repeat: int, action: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = await action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, result


async def measure(path: str, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
    await m.initialize()
    try:
        await m.count_jobs(JobListFilter(text="warm-up"))  # the file into the page cache
        for label, text in NEEDLES:
            ms, count = await _time(repeat, lambda text=text: m.count_jobs(JobListFilter(text=text)))
            out[f"count_{label}"] = round(ms, 1)
            print(f"count_jobs(text={text!r:<16}) -> {count:>8}   {ms:9.1f} ms", flush=True)
            ms, page = await _time(
                repeat,
                lambda text=text: m.get_jobs_with_cursor(filter=JobListFilter(text=text), limit=50, include_data=False),
            )
            out[f"page_{label}"] = round(ms, 1)
            print(f"first page (text={text!r:<16}) -> {len(page.jobs):>8}   {ms:9.1f} ms", flush=True)
    finally:
        await m.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--db", default=None, help="keep the store here (reused when it exists)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="monque-text-") as scratch:
        path = args.db or os.path.join(scratch, "jobs.db")
        if not os.path.exists(path):

            async def create() -> None:
                m = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
                await m.initialize()
                await m.close()

            asyncio.run(create())
            started = time.perf_counter()
            build(path, args.jobs)
            size = os.path.getsize(path) / 1e6
            print(f"built {args.jobs} jobs in {time.perf_counter() - started:.1f} s, {size:.0f} MB", flush=True)
        out = asyncio.run(measure(path, args.repeat))
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
