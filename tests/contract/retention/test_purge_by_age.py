"""Retention: finished jobs purged by age and status, by hand and periodically while started."""

from __future__ import annotations

from monque_engine import JobRetention, JobStatus
from monque_engine.timeutil import now_ms


async def test_purge_expired_jobs_by_age_and_status(monque, raw):
    m = await monque(job_retention=JobRetention(completed=60, failed=120))
    old = now_ms() - 100_000
    jobs = {}
    for status in ("completed", "failed", "cancelled", "pending"):
        for age in ("old", "new"):
            job = await m.enqueue("r", {"s": status, "age": age})
            fields = {"updatedAt": old if age == "old" else now_ms()}
            if status != "pending":
                fields["status"] = status
            await raw(m).set(job.id, **fields)
            jobs[(status, age)] = job.id
    removed = await m.purge_expired_jobs()
    assert removed == 1  # only the old completed one: the old failed one is within 120 s
    remaining = {j.id for j in await m.get_jobs(limit=100)}
    assert jobs[("completed", "old")] not in remaining
    assert set(jobs.values()) - {jobs[("completed", "old")]} == remaining


async def test_purge_without_retention_is_a_noop(monque, raw):
    m = await monque()
    job = await m.enqueue("r")
    await raw(m).set(job.id, status="completed", updatedAt=1)
    assert await m.purge_expired_jobs() == 0
    assert await m.get_job(job.id) is not None


async def test_retention_runs_periodically_while_started(monque, recorder, wait_until):
    m = await monque(job_retention={"completed": 0.05, "failed": 0.05, "interval": 0.05}, max_retries=1)
    rec = recorder(m, "job:complete", "job:fail")

    async def handler(job):
        if job.data == "fail":
            raise RuntimeError("x")

    m.register("ret", handler)
    ok = await m.enqueue("ret", "ok")
    bad = await m.enqueue("ret", "fail")
    keep = await m.enqueue("other", "pending stays")
    await m.start()
    await rec.wait_for("job:complete")
    await rec.wait_for("job:fail")
    await wait_until(lambda: _gone(m, ok.id, bad.id))
    assert (await m.get_job(keep.id)).status is JobStatus.PENDING


async def _gone(m, *ids):
    return all([await m.get_job(i) is None for i in ids])
