"""A single-job action whose guard missed while the job passed through another status.

The reliability run's operator races found it: a cancel of a job that was processing (a
miss), then the read for the error found it pending again (its handler failed and the retry
put it back), and the engine raised "Cannot cancel job in status 'pending'", a status the
guard allows. Here the status is changed between the guarded write and the read, on a real
store, the way another worker changes it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from monque_engine import JobStateError, JobStatus


def _between_write_and_read(m: Any, monkeypatch: pytest.MonkeyPatch, change: Callable[[str], Awaitable[None]]) -> None:
    """Run ``change`` once, after the first guarded write missed and before the engine's read."""
    store = m.store
    real_get = store.get
    changed: list[str] = []

    async def get(job_id: str) -> Any:
        if not changed:
            changed.append(job_id)
            await change(job_id)
        return await real_get(job_id)

    monkeypatch.setattr(store, "get", get)


@pytest.mark.parametrize(
    ("action", "then", "expected"),
    [
        ("cancel", "pending", JobStatus.CANCELLED),
        ("retry", "failed", JobStatus.PENDING),
        ("retry", "cancelled", JobStatus.PENDING),
        ("reschedule", "pending", JobStatus.PENDING),
    ],
)
async def test_a_miss_whose_job_now_passes_the_guard_is_written(
    monque, raw, recorder, monkeypatch, action: str, then: str, expected: JobStatus
) -> None:
    m = await monque()
    job = await m.enqueue("raced", {"n": 1})
    await raw(m).set(job.id, status="processing")
    _between_write_and_read(m, monkeypatch, lambda job_id: raw(m).set(job_id, status=then))
    rec = recorder(m)
    if action == "cancel":
        after = await m.cancel_job(job.id)
    elif action == "retry":
        after = await m.retry_job(job.id)
    else:
        after = await m.reschedule_job(job.id, timedelta(hours=1))
    assert after is not None and after.status is expected
    assert (await m.get_job(job.id)).status is expected
    if action == "cancel":
        assert rec.names() == ["job:cancelled"]
    if action == "retry":
        assert rec.names() == ["job:retried"] and rec.of("job:retried")[0].previous_status == then


async def test_a_miss_whose_job_is_still_refused_names_its_real_status(monque, raw, monkeypatch) -> None:
    m = await monque()
    job = await m.enqueue("raced", {"n": 1})
    await raw(m).set(job.id, status="processing")
    _between_write_and_read(m, monkeypatch, lambda job_id: raw(m).set(job_id, status="completed"))
    with pytest.raises(JobStateError) as info:
        await m.cancel_job(job.id)
    assert (info.value.current_status, info.value.attempted_action) == ("completed", "cancel")
    assert "in status 'completed'" in str(info.value)


async def test_a_status_that_keeps_changing_is_refused_after_a_few_writes(monque, raw, monkeypatch) -> None:
    """Every write misses (the job is processing again by then) and every read finds it pending."""
    m = await monque()
    job = await m.enqueue("flapping", {"n": 1})
    store = m.store
    real_cancel, real_get = store.cancel, store.get
    writes: list[str] = []

    async def cancel(job_id: str, now: int) -> Any:
        writes.append(job_id)
        await raw(m).set(job_id, status="processing")
        return await real_cancel(job_id, now)

    async def get(job_id: str) -> Any:
        await raw(m).set(job_id, status="pending")
        return await real_get(job_id)

    monkeypatch.setattr(store, "cancel", cancel)
    monkeypatch.setattr(store, "get", get)
    with pytest.raises(JobStateError, match="kept changing") as info:
        await m.cancel_job(job.id)
    assert info.value.current_status == "pending" and len(writes) == 3
