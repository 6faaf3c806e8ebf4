"""``monque-tui --worker --metrics``: a real worker process, scraped over HTTP while it drains.

The counters are checked against the jobs the store says were processed; the gauges against
a backlog held in place (``work.ok`` waits for a gate file); the labels for cardinality.
"""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import CliProcess, Samples, scrape, wait_until

from monque_engine import Monque

APP = "apps.metrics_app:monque"
OK_JOBS, FAILING_JOBS = 40, 5


def value(samples: Samples, metric: str, **labels: str) -> float | None:
    return samples.get((metric, tuple(sorted(labels.items()))))


def store_counts(url: str) -> dict[str, dict[str, int]]:
    async def read() -> dict[str, dict[str, int]]:
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        try:
            stats = await monque.store.stats_by_name()
            return {name: {s: stats[name].count(s) for s in ("completed", "failed", "pending")} for name in stats}
        finally:
            await monque.close()

    return asyncio.run(read())


def fill(url: str) -> list[str]:
    async def go() -> list[str]:
        monque = Monque(url)
        await monque.initialize()
        try:
            jobs = await monque.enqueue_many(
                [{"name": "work.ok", "data": {"n": n}} for n in range(OK_JOBS)]
                + [{"name": "work.fail", "data": {"n": n}} for n in range(FAILING_JOBS)]
                + [{"name": "work.flaky", "data": {}}]
            )
            return [job.id for job in jobs]
        finally:
            await monque.close()

    return asyncio.run(go())


@pytest.fixture
def worker(spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path) -> tuple[CliProcess, int, Path, list[str]]:
    ids = fill(db_url)
    gate = tmp_path / "gate"
    process = spawn(
        "--worker",
        "--app",
        APP,
        "--metrics",
        "0",
        "--log-format",
        "json",
        "--summary-interval",
        "0",
        env={"TEST_APP_URL": db_url, "METRICS_GATE": str(gate)},
    )
    serving = process.wait_for_event("metrics:serving")
    assert serving["url"].startswith("http://127.0.0.1:"), serving  # loopback unless a HOST is given
    process.wait_for_event("worker:started")
    return process, int(serving["port"]), gate, ids


def test_counters_match_the_jobs_the_store_processed(
    worker: tuple[CliProcess, int, Path, list[str]], db_url: str
) -> None:
    process, port, gate, ids = worker

    # Mid-drain: five work.ok jobs hold their slots, the rest wait; failures are already counted.
    held = wait_until(
        lambda: (
            (s := scrape(port))
            and value(s, "monque_jobs", name="work.ok", status="processing") == 5
            and value(s, "monque_jobs_failed_total", name="work.fail") == FAILING_JOBS
            and value(s, "monque_jobs_processed_total", name="work.flaky") == 2
            and s
        ),
        what="a scrape with five work.ok jobs running and the failures counted",
    )
    assert value(held, "monque_jobs_processed_total", name="work.ok") in (None, 0.0)  # running is not processed
    assert value(held, "monque_jobs_due", name="work.ok") == OK_JOBS - 5
    assert value(held, "monque_jobs_scheduled", name="work.ok") == 0
    assert (value(held, "monque_queue_latency_seconds", name="work.ok") or 0) > 0
    assert value(held, "monque_queue_consumers", name="work.ok") == 1
    assert value(held, "monque_instances", state="alive") == 1
    assert value(held, "monque_feed_state", state="live") == 1
    assert value(held, "monque_store_up") == 1
    assert value(held, "monque_jobs_failed_total", name="work.flaky") == 1
    assert value(held, "monque_job_retries_total", name="work.flaky") == 1
    assert value(held, "monque_job_retries_total", name="work.fail") == 0  # NonRetryableError: failed for good

    gate.touch()
    done = wait_until(  # the gauges are read at most once a second: the counters may lead them
        lambda: (
            (s := scrape(port))
            and value(s, "monque_jobs_processed_total", name="work.ok") == OK_JOBS
            and value(s, "monque_jobs", name="work.ok", status="completed") == OK_JOBS
            and s
        ),
        what="every work.ok job counted, and the store's counts read since",
    )
    stored = store_counts(db_url)
    assert stored["work.ok"]["completed"] == OK_JOBS
    assert value(done, "monque_jobs", name="work.ok", status="completed") == stored["work.ok"]["completed"]
    assert value(done, "monque_job_duration_seconds_count", name="work.ok") == stored["work.ok"]["completed"]
    assert value(done, "monque_jobs_failed_total", name="work.ok") == 0
    assert value(done, "monque_jobs_failed_total", name="work.fail") == stored["work.fail"]["failed"] == FAILING_JOBS
    assert value(done, "monque_jobs_processed_total", name="work.flaky") == 2  # one failed attempt, one success
    assert stored["work.flaky"]["completed"] == 1
    assert value(done, "monque_jobs_due", name="work.ok") == 0
    assert value(done, "monque_queue_latency_seconds", name="work.ok") == 0

    # Cardinality: the job name is the only open-ended label; no job id appears anywhere.
    monque_labels = {label for (name, labels) in done if name.startswith("monque_") for label, _ in labels}
    assert monque_labels <= {"name", "status", "state", "le"}
    names = {v for (name, labels) in done if name.startswith("monque_") for label, v in labels if label == "name"}
    assert names == {"work.ok", "work.fail", "work.flaky"}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    assert not any(job_id in text for job_id in ids)
    assert not re.search(r"[0-9a-f]{24}", text)

    process.send(signal.SIGTERM)
    assert process.wait_exit() == 0
    with pytest.raises(OSError):  # the endpoint goes with the worker
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


@pytest.mark.parametrize(
    ("value_", "message"),
    [
        ("abc", "expected [HOST:]PORT"),
        ("70000", "expected a port from 0 to 65535"),
        ("::1:9464", "put an IPv6 address in brackets"),
    ],
)
def test_bad_address_is_one_line_and_exit_2(
    spawn: Callable[..., CliProcess], db_url: str, value_: str, message: str
) -> None:
    process = spawn("--worker", "--app", "apps.worker_app:setup", "--metrics", value_, db_url)
    assert process.wait_exit() == 2
    assert len(process.lines) == 1 and message in process.lines[0], process.stderr
    assert not Path(db_url.removeprefix("sqlite:///")).exists()


def test_busy_port_is_one_line_and_exit_2(spawn: Callable[..., CliProcess], db_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = spawn("--worker", "--app", "apps.worker_app:setup", "--metrics", str(port), db_url)
        assert process.wait_exit() == 2
    assert len(process.lines) == 1, process.stderr
    assert f"--metrics 127.0.0.1:{port}: cannot listen there" in process.lines[0]


def test_the_console_refuses_metrics(spawn: Callable[..., CliProcess], db_url: str) -> None:
    process = spawn("--metrics", "9464", db_url)
    assert process.wait_exit() == 2
    assert "--metrics does not apply to the console" in process.stderr
