"""``Monque.metrics()``: what the collector reads, how much, and from which thread.

The gauges must stay cheap on a store of millions of jobs: due and scheduled are counted up
to a cap from the pending index (never the whole backlog), and their plan is checked here.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from monque_engine import Monque, NonRetryableError
from monque_engine.metrics import SPLIT_CAP, MonqueCollector, _split
from monque_engine.store.base import PendingSplit
from monque_engine.store.mongo.reads import pending_split_filters
from monque_engine.store.sqlite.counted import pending_split_sql
from monque_engine.store.sqlite.schema import Tables
from monque_engine.timeutil import now_ms


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_pending_split_counts_each_side_only_up_to_the_cap(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        now = now_ms()
        await monque.enqueue_many([{"name": "a", "data": i} for i in range(20)])
        for minutes in (5, 10, 15):
            await monque.enqueue("a", minutes, run_at=timedelta(minutes=minutes))
        await monque.enqueue("a", "queued")  # a lone enqueue lands in the inbox first: counted too
        [split] = await monque.store.pending_split(now_ms(), ["a"], 5)
        assert (split.due, split.scheduled) == (5, 3)
        [full] = await monque.store.pending_split(now_ms(), ["a"], 1000)
        assert (full.due, full.scheduled) == (21, 3)
        assert full.earliest_ms is not None and full.earliest_ms <= now_ms()
        assert full.latest_ms is not None and full.latest_ms >= now + 15 * 60_000 - 1000
        assert await monque.store.pending_split(now_ms(), ["nobody"], 5) == [PendingSplit("nobody", 0, 0, None, None)]


async def test_pending_split_reads_the_pending_index_only(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}") as monque:
        await monque.enqueue_many([{"name": "a", "data": i} for i in range(3)])
    with sqlite3.connect(path) as conn:
        plan = [
            row[3]
            for row in conn.execute(
                f"EXPLAIN QUERY PLAN {pending_split_sql(Tables('monque_jobs'))}", ["a", 0, 5, "a", 0, 5, "a", "a"]
            )
        ]
    reads = [step for step in plan if "monque_jobs" in step]
    assert len(reads) == 4, plan
    assert all(step.startswith("SEARCH") and "INDEX monque_jobs_pending (name=?" in step for step in reads), plan


def test_split_is_exact_when_either_side_is_under_the_cap() -> None:
    assert _split(PendingSplit("a", SPLIT_CAP, 7, 0, 10), 50_000, 5) == (49_993, 7)
    assert _split(PendingSplit("a", 9, SPLIT_CAP, 0, 10), 50_000, 5) == (9, 49_991)
    # Over the cap on both sides: estimated, but never below what was counted on either side.
    due, scheduled = _split(PendingSplit("a", SPLIT_CAP, SPLIT_CAP, 0, 100), 100_000, 1)
    assert due + scheduled == 100_000 and due >= SPLIT_CAP and scheduled >= SPLIT_CAP


def test_mongo_split_filters_lead_with_the_name_status_nextrunat_index() -> None:
    for document in pending_split_filters("a", 0):
        assert list(document)[:3] == ["name", "status", "nextRunAt"]
        assert document["status"] == "pending"


async def test_collector_counts_this_process_outcomes_and_reads_the_store(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", max_retries=1) as monque:
        collector = monque.metrics()
        assert monque.metrics() is collector  # one collector: events are counted once
        finished = asyncio.Event()
        outcomes: list[str] = []

        async def ok(job: object) -> None:
            return None

        async def bad(job: object) -> None:
            raise NonRetryableError("no")

        def seen(_event: object) -> None:
            outcomes.append("x")
            if len(outcomes) == 4:
                finished.set()

        monque.register("ok", ok)
        monque.register("bad", bad)
        monque.on("job:complete", seen)
        monque.on("job:fail", seen)
        await monque.enqueue_many([{"name": "ok", "data": i} for i in range(3)] + [{"name": "bad", "data": 0}])
        await monque.start()
        await asyncio.wait_for(finished.wait(), 20)
        registry = CollectorRegistry()
        registry.register(collector)
        # A scrape from another thread reads the store on the Monque's loop.
        got = samples((await asyncio.to_thread(generate_latest, registry)).decode())
        assert got[("monque_jobs_processed_total", (("name", "ok"),))] == 3
        assert got[("monque_jobs_failed_total", (("name", "bad"),))] == 1
        assert got[("monque_jobs", (("name", "ok"), ("status", "completed")))] == 3
        assert got[("monque_jobs", (("name", "bad"), ("status", "failed")))] == 1
        assert got[("monque_store_up", ())] == 1
        await monque.stop()


async def test_a_scrape_on_the_loop_itself_never_blocks_it(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        await monque.enqueue("a", {})
        collector = MonqueCollector(monque)
        registry = CollectorRegistry()
        registry.register(collector)
        started = time.monotonic()
        first = samples(generate_latest(registry).decode())  # on the loop: the last reading (none yet)
        assert time.monotonic() - started < collector.read_timeout
        assert first[("monque_store_up", ())] == 0
        await collector.refresh()
        got = samples(generate_latest(registry).decode())
        assert got[("monque_store_up", ())] == 1
        assert got[("monque_jobs_due", (("name", "a"),))] == 1


SCRIPT = """
import asyncio, json, sys
block = sys.argv[1] == "block"
if block:
    sys.modules["prometheus_client"] = None  # as if not installed
import monque_engine
from monque_engine import Monque
async def main():
    m = Monque("sqlite:///" + sys.argv[2])
    try:
        m.metrics()
        error = None
    except ImportError as e:
        error = f"{type(e).__name__}: {e}"
    return error
error = asyncio.run(main())
print(json.dumps({"error": error, "loaded": "prometheus_client" in sys.modules and sys.modules["prometheus_client"] is not None}))
"""


def test_the_engine_imports_without_prometheus_client_and_says_how_to_get_it(tmp_path: Path) -> None:
    plain = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, monque_engine; from monque_engine import Monque; print('prometheus_client' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert plain.stdout.strip() == "False"
    blocked = subprocess.run(
        [sys.executable, "-c", SCRIPT, "block", str(tmp_path / "j.db")], capture_output=True, text=True, timeout=60
    )
    report = json.loads(blocked.stdout.strip().splitlines()[-1])
    assert report["error"].startswith("MetricsUnavailableError")
    assert "pip install 'monque-tui[metrics]'" in report["error"]


@pytest.mark.parametrize("cache", [60.0])
async def test_gauges_are_read_once_per_cache_period(tmp_path: Path, cache: float) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        collector = MonqueCollector(monque, cache_seconds=cache)
        reads = 0
        original = monque.store.stats_by_name

        async def counting() -> object:
            nonlocal reads
            reads += 1
            return await original()

        monque.store.stats_by_name = counting  # type: ignore[method-assign]
        registry = CollectorRegistry()
        registry.register(collector)
        for _ in range(5):
            await asyncio.to_thread(generate_latest, registry)
        assert reads == 1
