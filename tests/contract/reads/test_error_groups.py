"""Error groups (issue 12 item 3, data side): grouping, and bulk actions on exactly one group.

Runs per store. Jobs fail through the real processor (max_retries=1: the first failure is
final), so the stored group key is the one the processor computes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter, JobSelector, JobStatus


class OrderMissing(Exception):
    pass


def _handler(job):
    kind = job.data["kind"]
    if kind == "missing":
        raise OrderMissing(f"order {job.data['order']} not found in shard '{job.data['shard']}'")
    if kind == "key":
        raise KeyError(job.data["key"])
    return None


async def _fail_all(m, recorder, payloads, name="orders"):
    rec = recorder(m, "job:fail", "job:complete")
    m.register(name, _handler)
    jobs = [await m.enqueue(name, payload) for payload in payloads]
    await m.start()
    await rec.wait_for("job:fail", count=sum(1 for p in payloads if p["kind"] != "ok"))
    await rec.wait_for("job:complete", count=sum(1 for p in payloads if p["kind"] == "ok"))
    await m.stop()
    return jobs


PAYLOADS = [
    {"kind": "missing", "order": 1001, "shard": "eu-1"},
    {"kind": "missing", "order": 2002, "shard": "us-2"},
    {"kind": "missing", "order": 3003, "shard": "eu-1"},
    {"kind": "key", "key": "signing_secret"},
    {"kind": "ok"},
]


async def test_failures_are_grouped_by_name_type_and_normalised_message(monque, recorder, raw) -> None:
    m = await monque(max_retries=1)
    jobs = await _fail_all(m, recorder, PAYLOADS)
    # One member of the big group is still retrying (pending after a failure).
    await raw(m).set(jobs[0].id, status="pending", failCount=1, nextRunAt=datetime.now(UTC) + timedelta(hours=1))
    groups = await m.error_groups()
    assert len(groups) == 2
    by_type = {g.error_type: g for g in groups}
    missing = by_type[f"{__name__}.OrderMissing"]
    assert (missing.name, missing.count, missing.retrying, missing.failed) == ("orders", 3, 1, 2)
    assert missing.pattern == "order <n> not found in shard '<str>'"
    assert missing.title == f"{__name__}.OrderMissing: order <n> not found in shard '<str>'"
    assert missing.sample_message is not None and missing.sample_message.startswith("order ")
    assert missing.first_seen <= missing.last_seen
    assert len(missing.per_minute) == 60 and sum(missing.per_minute) == 3 and missing.per_minute[-1] >= 1
    key = by_type["KeyError"]
    assert (key.count, key.retrying, key.pattern) == (1, 0, "'<str>'")
    assert {job.error_group for job in await m.get_jobs(status="failed")} == {missing.key, key.key}
    # filters: by name, and since an instant after every failure
    assert await m.error_groups(name="other") == []
    assert await m.error_groups(since=datetime.now(UTC) + timedelta(minutes=1)) == []
    # the listing filter shows exactly the group's members
    assert await m.count_jobs(JobListFilter(error_group=missing.key)) == 3
    page = await m.get_jobs_with_cursor(filter=JobListFilter(error_group=key.key))
    assert [j.id for j in page.jobs] == [jobs[3].id]


async def test_group_retry_and_delete_touch_exactly_that_group(monque, recorder) -> None:
    m = await monque(max_retries=1)
    jobs = await _fail_all(m, recorder, PAYLOADS)
    groups = {g.error_type: g for g in await m.error_groups()}
    missing, key = groups[f"{__name__}.OrderMissing"], groups["KeyError"]
    # "never more than confirmed": a bound before the failures selects nothing
    before = datetime.now(UTC) - timedelta(hours=1)
    assert (await m.retry_jobs(JobSelector(error_group=missing.key, updated_before=before))).count == 0
    bound = datetime.now(UTC) + timedelta(seconds=1)
    result = await m.retry_jobs(JobSelector(error_group=missing.key, updated_before=bound))
    assert result.count == 3
    statuses = {j.id: j.status for j in [await m.get_job(job.id) for job in jobs]}
    assert [statuses[j.id] for j in jobs] == [JobStatus.PENDING] * 3 + [JobStatus.FAILED, JobStatus.COMPLETED]
    retried = await m.get_job(jobs[0].id)
    assert retried.error_group is None and retried.fail_reason is None and len(retried.attempts) == 1
    assert [g.error_type for g in await m.error_groups()] == ["KeyError"]
    assert (await m.delete_jobs(JobSelector(error_group=key.key))).count == 1
    assert await m.get_job(jobs[3].id) is None
    assert await m.get_job(jobs[4].id) is not None  # the completed job is untouched
    assert await m.error_groups() == []


async def test_a_completed_job_leaves_its_group(monque, recorder) -> None:
    m = await monque(max_retries=3, base_retry_interval=0.01)
    rec = recorder(m, "job:fail", "job:complete")
    calls = []

    def flaky(job):
        calls.append(1)
        if len(calls) == 1:
            raise TimeoutError("upstream took 30 s")

    m.register("flaky", flaky)
    job = await m.enqueue("flaky")
    await m.start()
    await rec.wait_for("job:complete")
    assert await m.error_groups() == []
    assert (await m.get_job(job.id)).error_group is None
    assert await m.count_jobs(JobListFilter(error_group="0" * 16)) == 0


@pytest.mark.parametrize("bad", ["", "   ", 42])
async def test_a_bad_group_key_is_a_clear_query_error(monque, bad) -> None:
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match=r"error_group"):
        await m.delete_jobs(JobSelector(error_group=bad))


async def test_first_seen_and_the_last_hour_survive_a_bulk_retry(monque, recorder) -> None:
    """Issue 40: FIRST SEEN and the sparkline came from the members' last failure, so after
    a bulk retry (every member failed again just now) the incident's start vanished. They
    come from the group's failed-attempt counters now: a retry takes nothing back."""
    m = await monque(max_retries=1)
    payloads = PAYLOADS[:3]
    jobs = await _fail_all(m, recorder, payloads)  # stop() flushes the counters
    (before,) = await m.error_groups()
    assert sum(before.per_minute) == 3
    first = before.first_seen_ms
    assert first <= min([(await m.get_job(job.id)).updated_at_ms for job in jobs])
    assert (await m.retry_jobs(JobSelector(error_group=before.key))).count == 3
    assert await m.error_groups() == []  # no member left until they fail again
    for job in jobs:
        await m.reschedule_job(job.id, datetime.now(UTC))
    rec = recorder(m, "job:fail")
    await m.start()
    await rec.wait_for("job:fail", count=3)
    await m.stop()
    (after,) = await m.error_groups()
    assert after.key == before.key and after.count == 3
    refailed = min([(await m.get_job(job.id)).updated_at_ms for job in jobs])
    assert refailed > first  # the members alone would say the group started now
    # To the minute (the counters' resolution; here retry and re-failure fell in one minute:
    # the next test reaches back across minutes).
    assert after.first_seen_ms // 60_000 == first // 60_000
    assert sum(after.per_minute) == 6  # every failed attempt, not one per member


async def test_first_seen_reaches_back_to_the_counters_first_minute(monque, recorder) -> None:
    """A group whose counters hold failures from 10 minutes ago (members retried since)
    is first seen then; the minute is the counters' resolution."""
    from monque_engine.errorgroups import error_counter_name

    m = await monque(max_retries=1)
    await _fail_all(m, recorder, PAYLOADS[:1])
    (group,) = await m.error_groups()
    earlier = group.last_seen_ms // 60_000 - 10
    await m.store.add_outcome_counts({(error_counter_name(group.key), earlier): (0, 4)})
    (group,) = await m.error_groups()
    assert group.first_seen_ms == earlier * 60_000
    assert sum(group.per_minute) == 5
    # Queue health never shows a group's counter as a job name.
    assert [h.name for h in await m.queue_health()] == ["orders"]
