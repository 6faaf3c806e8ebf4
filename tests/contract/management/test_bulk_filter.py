"""Contract: bulk cancel / retry / delete on any listing filter (issue 13), one store operation.

Every filter a listing offers (statuses, created / updated / next-run ranges, search,
recurring) selects exactly what ``count_jobs`` / ``get_jobs_with_cursor`` would list, the
guards still hold (cancel only pending, retry only failed or cancelled), the
``updated_before`` bound keeps a confirmed action from reaching jobs changed after the
question, and ``count_bulk`` gives the number to confirm with.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter, JobSelector, JobStatus


def _forbid_reads(m: Any) -> list[str]:
    """Make row-by-row reads fail, and record the bulk store calls: one operation per call."""
    calls: list[str] = []
    store = m.store

    async def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a bulk action must not read jobs row by row")

    for method in ("page", "find", "get"):
        setattr(store, method, refuse)
    for method in ("cancel_many", "retry_many", "delete_many"):
        original = getattr(store, method)

        async def spy(*args: Any, _name: str = method, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return await _original(*args, **kwargs)

        setattr(store, method, spy)
    return calls


async def test_cancel_on_a_next_run_range_reaches_only_pending_jobs_in_it(monque):
    m = await monque()
    now = datetime.now(UTC)
    soon = [await m.enqueue("email", {"n": n}, run_at=timedelta(minutes=5)) for n in range(3)]
    later = await m.enqueue("email", run_at=timedelta(hours=5))
    failed_in_range = await m.enqueue("email", run_at=timedelta(minutes=5))
    await m.cancel_job(failed_in_range.id)
    view = JobListFilter(next_run_at_from=now + timedelta(minutes=1), next_run_at_to=now + timedelta(minutes=10))
    assert await m.count_jobs(view) == 4
    assert await m.count_bulk("cancel", view) == 3
    calls = _forbid_reads(m)
    result = await m.cancel_jobs(view)
    assert result.count == 3 and calls == ["cancel_many"]
    m.store.get = type(m.store).get.__get__(m.store)  # reads allowed again for the checks
    for job in soon:
        assert (await m.get_job(job.id)).status is JobStatus.CANCELLED
    assert (await m.get_job(later.id)).status is JobStatus.PENDING


async def test_retry_on_an_updated_range_and_search(monque):
    m = await monque()
    jobs = [await m.enqueue("report", {"n": n}, unique_key=f"acct-{n}") for n in range(4)]
    for job in jobs:
        await m.cancel_job(job.id)
    view = JobListFilter(
        search="acct-1", status=["cancelled", "pending"], updated_at_from=datetime.now(UTC) - timedelta(minutes=1)
    )
    assert await m.count_bulk("retry", view) == 1
    result = await m.retry_jobs(view)
    assert result.count == 1 and result.errors == []
    statuses = {job.id: (await m.get_job(job.id)).status for job in jobs}
    assert statuses[jobs[1].id] is JobStatus.PENDING
    assert [s for i, s in statuses.items() if i != jobs[1].id] == [JobStatus.CANCELLED] * 3


async def test_guards_hold_for_listing_filters(monque):
    m = await monque()
    job = await m.enqueue("email")
    await m.cancel_job(job.id)
    assert (await m.cancel_jobs(JobListFilter(status="cancelled"))).count == 0
    assert await m.count_bulk("cancel", JobListFilter(status="cancelled")) == 0
    pending = await m.enqueue("email")
    assert (await m.retry_jobs(JobListFilter(status="pending"))).count == 0
    assert (await m.get_job(pending.id)).status is JobStatus.PENDING


async def test_delete_on_a_created_range_and_recurring_filter(monque):
    m = await monque()
    one_off = await m.enqueue("email")
    cron = await m.schedule("0 * * * *", "digest")
    view = JobListFilter(recurring=True, created_at_from=datetime.now(UTC) - timedelta(minutes=1))
    assert await m.count_bulk("delete", view) == 1
    assert (await m.delete_jobs(view)).count == 1
    assert await m.get_job(cron.id) is None and await m.get_job(one_off.id) is not None


async def test_updated_before_keeps_jobs_changed_after_the_count(monque, raw):
    m = await monque()
    old = await m.enqueue("email")
    new = await m.enqueue("email")
    asked_at = datetime.now(UTC)
    await raw(m).set(old.id, updatedAt=asked_at - timedelta(seconds=5))
    await raw(m).set(new.id, updatedAt=asked_at + timedelta(seconds=5))  # changed after the question
    view = JobListFilter(name="email", status="pending")
    assert await m.count_bulk("cancel", view, updated_before=asked_at) == 1
    assert (await m.cancel_jobs(view, updated_before=asked_at)).count == 1
    assert (await m.get_job(new.id)).status is JobStatus.PENDING
    # The same bound on upstream's selector, as the console uses it (the cancel just now
    # changed ``old``; ``new`` still looks changed later).
    bound = asked_at + timedelta(seconds=2)
    assert (await m.delete_jobs(JobSelector(name="email", updated_before=bound))).count == 1
    assert await m.get_job(old.id) is None and await m.get_job(new.id) is not None


async def test_a_bulk_target_of_the_wrong_type_is_a_clear_error(monque):
    m = await monque()
    await m.enqueue("email")
    with pytest.raises(InvalidJobQueryError, match="Pass a JobSelector or a JobListFilter to a bulk delete"):
        await m.delete_jobs({"name": "email"})  # type: ignore[arg-type]
    with pytest.raises(InvalidJobQueryError, match="action must be 'cancel', 'retry', 'delete' or 'stop'"):
        await m.count_bulk("purge", JobListFilter())
    with pytest.raises(InvalidJobQueryError, match="updated_before must be timezone-aware"):
        await m.cancel_jobs(JobListFilter(), updated_before=datetime(2026, 1, 1))
    assert await m.count_jobs() == 1
