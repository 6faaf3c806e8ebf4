"""The throughput line tells the truth (issue 10, defect 7): only a worker's outcomes count,
failed attempts that will be retried count as failures, each line has its own scale, and
a small non-zero rate never draws the zero glyph."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from monque_engine import ChangeEvent, Job, JobStatus
from monque_tui.console.session.feed import Throughput
from monque_tui.console.widgets.throughput_graph import SECONDS, ZERO, ThroughputGraph, sparkline

NOW = 1_768_478_400_000


def change(job_id: str, status: JobStatus | None, next_run: int | None = 0, operation: str = "update") -> ChangeEvent:
    """A change as the feed reports it (status and next run at the change; no document needed)."""
    return ChangeEvent(
        operation=operation,
        job_id=job_id,
        job=None,
        token=None,
        name="n",
        status=status,  # type: ignore[arg-type]
        next_run_at_ms=next_run,
    )


def test_only_worker_outcomes_count() -> None:
    clock_ms = [NOW]
    meter = Throughput(lambda: clock_ms[0])
    # a worker claims and completes a; claims b, which fails for good; claims c, which fails and will retry
    for job_id in ("a", "b", "c"):
        meter.record(change(job_id, JobStatus.PROCESSING, next_run=NOW - 10))
    meter.record(change("a", JobStatus.COMPLETED))
    meter.record(change("b", JobStatus.FAILED))
    meter.record(change("c", JobStatus.PENDING, next_run=NOW + 5_000))  # retry later: a failed attempt
    # an operator deletes 1,000 jobs, cancels one, retries one; stale recovery returns d to pending
    for i in range(1000):
        meter.record(change(f"x{i}", None, operation="delete"))
    meter.record(change("e", JobStatus.CANCELLED))
    meter.record(change("f", JobStatus.PENDING, next_run=NOW))
    meter.record(change("d", JobStatus.PROCESSING, next_run=NOW - 10))
    meter.record(change("d", JobStatus.PENDING, next_run=NOW - 10))  # same next run: a recovery, not a failure
    # c's return to pending waits for its job (read at the flush): a fail count above zero
    assert meter.undecided == ["c"]
    meter.settle({"c": _job(fail_count=1)})
    clock_ms[0] = NOW + 1000
    completed, failed = meter.series(2)
    assert completed == [0.0, 1.0] and failed == [0.0, 2.0]
    assert meter.undecided == []


def _job(fail_count: int) -> Job:
    """What ``settle`` reads of a job: its fail count."""
    return cast(Job, SimpleNamespace(fail_count=fail_count))


def test_a_recurring_completion_is_a_completion_once_its_job_is_read() -> None:
    """The feed carries no documents (a flush reads the jobs): a claimed job back in pending
    with a later run is a recurring job's completion (its fail count reset to 0) or a failed
    attempt to retry; each lands in the second it happened, not the second it was read."""
    clock_ms = [NOW]
    meter = Throughput(lambda: clock_ms[0])
    for job_id in ("cron", "retry", "gone"):
        meter.record(change(job_id, JobStatus.PROCESSING, next_run=NOW - 10))
        meter.record(change(job_id, JobStatus.PENDING, next_run=NOW + 60_000))
    meter.record(change("done", JobStatus.COMPLETED))
    assert sorted(meter.undecided) == ["cron", "gone", "retry"]
    clock_ms[0] = NOW + 1000  # read a second later, at the flush
    meter.record(change("later", JobStatus.COMPLETED))
    meter.settle({"cron": _job(fail_count=0), "retry": _job(fail_count=2)})  # "gone" was deleted meanwhile
    clock_ms[0] = NOW + 2000
    completed, failed = meter.series(2)
    assert completed == [2.0, 1.0]  # "done" and the cron run at NOW, "later" a second after
    assert failed == [2.0, 0.0]  # the retry, and the job gone before it was read


def test_each_line_has_its_own_scale_and_small_rates_show() -> None:
    line = sparkline([0.0, 1.0, 1000.0])
    assert line[0] == ZERO and line[1] != ZERO and line[2] == "█"
    assert sparkline([0.0, 2.0])[1] == "█"  # two failures a second fill their own line


async def test_the_label_says_what_the_line_plots() -> None:
    graph = ThroughputGraph()
    rendered: list[object] = []
    graph.update = lambda content, **_: rendered.append(content)  # type: ignore[method-assign]
    graph.show([1.0] * 60, [0.0] * 60)
    text = str(rendered[-1])
    assert f"last {SECONDS} s" in text and "minute" not in text and "failed attempts/s" in text
    assert text.count("█") == SECONDS  # 60 values given, 30 plotted
