"""The console takes the feed a pull at a time as rows (``ChangeBuffer.add_rows``, issue 40): a
batch must leave the view, the marks and the meter exactly as the same changes one by one did.

Several changes of one job often share a pull (insert, claim and completion within 50 ms):
the latest must win, or a view filtered by status decides on a stale status and never reads
the job (a cancelled job missing from the "cancelled" tab)."""

from __future__ import annotations

from monque_engine import ChangeEvent, JobStatus, Monque
from monque_engine.change_rows import ChangeRows, event_row
from monque_tui.console.query import JobQuery
from monque_tui.console.session.feed import MAX_PENDING, ChangeBuffer, Throughput

from .conftest import console_session, flush_until, wait_for

NOW = 1_768_478_400_000


def _change(
    job_id: str, status: JobStatus | None, next_run: int = 0, op: str = "update", token: int = 0
) -> ChangeEvent:
    return ChangeEvent(op, job_id, None, token, "n", status, next_run)  # type: ignore[arg-type]


def _history() -> list[ChangeEvent]:
    """A worker's outcomes and an operator's actions, several per job."""
    return [
        _change("a", JobStatus.PENDING, op="insert"),
        _change("a", JobStatus.PROCESSING, NOW - 10),
        _change("a", JobStatus.COMPLETED),
        _change("b", JobStatus.PROCESSING, NOW - 10),
        _change("b", JobStatus.FAILED),
        _change("c", JobStatus.PROCESSING, NOW - 10),
        _change("c", JobStatus.PENDING, NOW + 5_000),  # a failed attempt to retry (or a cron run)
        _change("d", JobStatus.PENDING, op="insert"),
        _change("d", JobStatus.CANCELLED),
        _change("e", JobStatus.PENDING, op="insert"),
        _change("e", JobStatus.PENDING, op="delete"),
        _change("f", JobStatus.PROCESSING, NOW - 10),
        _change("f", JobStatus.PENDING, NOW - 10),  # a stale recovery: not an outcome
    ]


def test_a_batch_counts_and_keeps_what_one_by_one_did() -> None:
    clock_ms = [NOW]
    one_by_one, batched = ChangeBuffer(Throughput(lambda: clock_ms[0])), ChangeBuffer(Throughput(lambda: clock_ms[0]))
    for change in _history():
        one_by_one.add(change)
    changes = _history()
    batched.add_rows(ChangeRows([event_row(c) for c in changes[:6]], 6))
    batched.add_rows(ChangeRows([event_row(c) for c in changes[6:]], 13))
    for buffer in (one_by_one, batched):
        assert buffer.events == 13 and buffer.pending == 6
        assert buffer.throughput.undecided == ["c"]
        buffer.throughput.settle({})  # c gone meanwhile: a failed attempt
    taken = batched.take()
    assert taken.changes == one_by_one.take().changes
    # the latest change of each job: d's cancel (not its insert), e's delete
    assert taken.changes["d"][4] == "cancelled" and taken.changes["e"][1] == "delete"
    clock_ms[0] = NOW + 1000
    # a completed; b failed for good, c's retry (its job gone when read): two failed attempts
    assert one_by_one.throughput.series(1) == batched.throughput.series(1) == ([1.0], [2.0])


def test_a_batch_past_the_bound_reloads() -> None:
    buffer = ChangeBuffer(Throughput(lambda: NOW))
    rows = [event_row(_change(f"j{i}", JobStatus.PENDING, op="insert")) for i in range(MAX_PENDING + 1)]
    buffer.add_rows(ChangeRows(rows, len(rows)))
    batch = buffer.take()
    assert batch.reload and not batch.changes


async def test_a_job_inserted_and_cancelled_while_paused_shows_in_the_cancelled_view(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        session.set_query(JobQuery(status=JobStatus.CANCELLED))
        await session.load_top()
        await wait_for(lambda: session.feed_state == "live")
        session.set_paused(True)
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            job = await other.enqueue("cancelled-at-once")
            await other.cancel_job(job.id)
        await wait_for(lambda: session.buffer.events >= 2)
        session.set_paused(False)
        await flush_until(session, lambda: session.window.get(job.id) is not None)
        shown = session.window.get(job.id)
        assert shown is not None and shown.status is JobStatus.CANCELLED
