"""Metrics series stay bounded however many job names a store holds (issue 34, part 6).

A name gets series of its own only in the collector's named set (the names given, or the first
N seen); the rest are summed under ``name="other"``. The set is sticky, so every counter stays
monotonic across scrapes and the sums still equal the store.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from monque_engine import Monque
from monque_engine.metrics import DEFAULT_MAX_NAMES, OTHER, MonqueCollector

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(collector: MonqueCollector) -> Samples:
    await collector.refresh()
    registry = CollectorRegistry()
    registry.register(collector)
    text = (await asyncio.to_thread(generate_latest, registry)).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def names_of(samples: Samples, metric: str) -> set[str]:
    return {dict(labels)["name"] for name, labels in samples if name == metric}


def per_name_series(samples: Samples) -> int:
    return sum(1 for _, labels in samples if "name" in dict(labels))


async def test_five_thousand_names_give_bounded_series_whose_sums_equal_the_store(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        await monque.enqueue_many([{"name": f"job.{n:04d}", "data": n} for n in range(5000)])
        await monque.enqueue_many([{"name": "job.0001", "data": n} for n in range(3)])
        collector = MonqueCollector(monque)
        got = await scrape(collector)
        stats = await monque.store.stats_by_name()
    assert len(stats) == 5000
    gauged = names_of(got, "monque_jobs")
    assert len(gauged) == DEFAULT_MAX_NAMES + 1 and OTHER in gauged
    # Ten gauge series per name (five statuses, due, scheduled, latency, paused, consumers).
    assert per_name_series(got) <= (DEFAULT_MAX_NAMES + 1) * 10
    for status in ("pending", "completed"):
        total = sum(
            value for (metric, labels), value in got.items() if metric == "monque_jobs" and ("status", status) in labels
        )
        assert total == sum(s.count(status) for s in stats.values())
    due = sum(value for (metric, _), value in got.items() if metric == "monque_jobs_due")
    assert due == 5003
    assert got[("monque_jobs", (("name", "job.0001"), ("status", "pending")))] == 4  # its own series, exact


async def test_counters_stay_monotonic_and_sum_to_the_store_across_scrapes(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        collector = monque.metrics(max_names=10)
        finished: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        done = 0
        want = 0

        async def handler(job: object) -> None:
            return None

        def seen(_event: object) -> None:
            nonlocal done
            done += 1
            if done == want:
                finished["phase"].set()

        for n in range(30):
            monque.register(f"name.{n:02d}", handler)
        monque.on("job:complete", seen)
        await monque.start()
        scrapes: list[Samples] = []
        for phase, names in enumerate((range(20), range(30))):
            finished["phase"] = asyncio.Event()
            want = done + 2 * len(names)
            await monque.enqueue_many([{"name": f"name.{n:02d}", "data": k} for n in names for k in range(2)])
            await asyncio.wait_for(finished["phase"].wait(), 60)
            scrapes.append(await scrape(collector))
            completed = sum(s.count("completed") for s in (await monque.store.stats_by_name()).values())
            processed = {
                dict(labels)["name"]: value
                for (metric, labels), value in scrapes[-1].items()
                if metric == "monque_jobs_processed_total"
            }
            assert sum(processed.values()) == completed == want, phase
            assert len(processed) == 11 and OTHER in processed
        await monque.stop()
    first, second = scrapes
    own = names_of(first, "monque_jobs_processed_total") - {OTHER}
    assert names_of(second, "monque_jobs_processed_total") - {OTHER} == own  # sticky: no name moved
    for key, value in first.items():
        if key[0].endswith("_total") or key[0].endswith("_count"):
            assert second[key] >= value, key
    assert second[("monque_jobs_processed_total", (("name", OTHER),))] == 2 * 10 + 2 * 20


async def test_names_given_are_the_only_ones_with_series_of_their_own(tmp_path: Path) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}") as monque:
        await monque.enqueue_many([{"name": name, "data": 0} for name in ("a", "b", "c", "d", OTHER)])
        got = await scrape(MonqueCollector(monque, names=["c", "zz"]))
    assert names_of(got, "monque_jobs") == {"c", OTHER}
    assert got[("monque_jobs", (("name", OTHER), ("status", "pending")))] == 4  # a, b, d and a job named "other"
