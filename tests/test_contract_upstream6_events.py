"""Upstream parity: the event surface (``events.test.ts``; Monque is a Node EventEmitter).

Upstream tests add and remove listeners with ``on`` / ``once`` / ``off`` (covered in
test_contract_events) and, as any EventEmitter, count and clear them with
``listenerCount`` / ``removeAllListeners``: ours are ``listener_count`` /
``remove_all_listeners``.
"""

from __future__ import annotations

from monque_engine import JobStatus


async def test_listener_count_and_remove_all_listeners(monque, wait_until):
    m = await monque()
    seen: list[str] = []

    def on_start(job):
        seen.append("start")

    m.on("job:start", on_start)
    m.once("job:start", on_start)
    m.on("job:complete", lambda event: seen.append("complete"))
    assert (m.listener_count("job:start"), m.listener_count("job:complete"), m.listener_count("job:fail")) == (2, 1, 0)
    m.remove_all_listeners("job:start")
    assert (m.listener_count("job:start"), m.listener_count("job:complete")) == (0, 1)
    m.remove_all_listeners()
    assert m.listener_count("job:complete") == 0

    async def handler(job):
        return None

    m.register("quiet", handler)
    job = await m.enqueue("quiet", {})
    await m.start()
    await wait_until(lambda: _completed(m, job.id), message="the job ran")
    assert seen == []  # nothing left listening


async def _completed(m, job_id):
    job = await m.get_job(job_id)
    return job is not None and job.status is JobStatus.COMPLETED
