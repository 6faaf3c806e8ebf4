"""Issue 38 part 2: test mode runs jobs inline at ``enqueue`` and records what a worker would.

Against a real SQLite file; the handlers are the application's own (async and sync). The
last tests use the pytest plugin's fixtures as an application's suite would.
"""

from __future__ import annotations

import pytest

from monque_engine import (
    InvalidJobIdentifierError,
    JobStateError,
    JobStatus,
    Monque,
    SyncMonque,
    WorkerRegistrationError,
)
from monque_engine.errors import ConnectionError
from monque_engine.testing import test_mode, test_mode_active


@pytest.fixture
async def eager(tmp_path):
    async with Monque(f"sqlite:///{tmp_path}/jobs.db", test_mode=True, max_retries=3, base_retry_interval=60) as m:
        yield m


async def test_enqueue_runs_the_handler_and_returns_the_finished_job(eager):
    seen = []

    async def double(job):
        seen.append(job.data)
        return job.data * 2

    eager.register("double", double)
    job = await eager.enqueue("double", 21)
    assert seen == [21]
    assert job.status is JobStatus.COMPLETED and job.result == 42
    assert [a.outcome for a in job.attempts] == ["completed"]
    stored = await eager.get_job(job.id)
    assert stored.status is JobStatus.COMPLETED and stored.result == 42
    assert (await eager.wait(job.id, timeout=5)).result == 42  # final already: no waiting
    assert (await eager.now("double", 1)).result == 2


async def test_retries_run_at_once_and_failure_is_recorded_as_a_worker_would(eager):
    calls = []

    def flaky(job):  # sync: runs in a thread, as under a worker
        calls.append(job.fail_count)
        if len(calls) < 2:
            raise RuntimeError("first try fails")
        return "ok"

    def broken(job):
        raise ValueError("always")

    eager.register("flaky", flaky)
    eager.register("broken", broken)
    job = await eager.enqueue("flaky")
    assert job.status is JobStatus.COMPLETED and job.result == "ok" and calls == [0, 1]
    assert [a.outcome for a in job.attempts] == ["retrying", "completed"]  # the 60 s backoff not waited
    failed = await eager.enqueue("broken", {"n": 1})
    assert failed.status is JobStatus.FAILED and failed.fail_count == 3  # max_retries
    assert failed.fail_reason == "always"
    assert [a.outcome for a in failed.attempts] == ["retrying", "retrying", "failed"]


async def test_events_fire_as_under_a_worker(eager):
    events = []
    eager.on("job:complete", lambda event: events.append(("complete", event.job.id)))
    eager.register("x", lambda job: None)
    job = await eager.enqueue("x")
    assert events == [("complete", job.id)]


async def test_later_scheduled_and_unhandled_jobs_are_stored_not_run_and_run_job_runs_them(eager):
    from datetime import timedelta

    runs = []
    eager.register("later", lambda job: runs.append(job.id) or len(runs))
    later = await eager.enqueue("later", run_at=timedelta(hours=1))
    cron = await eager.schedule("0 9 * * *", "later")
    orphan = await eager.enqueue("nobody-handles-this")
    assert (later.status, cron.status, orphan.status) == (JobStatus.PENDING,) * 3 and runs == []
    done = await eager.run_job(later.id)
    assert done.status is JobStatus.COMPLETED and done.result == 1
    again = await eager.run_job(cron.id)  # one run; the schedule's next run is for later
    assert again.status is JobStatus.PENDING and again.result == 2 and again.next_run_at_ms > done.updated_at_ms
    with pytest.raises(JobStateError, match="run_job\\(\\) runs pending jobs"):
        await eager.run_job(later.id)
    with pytest.raises(WorkerRegistrationError, match="no handler is registered for 'nobody-handles-this'"):
        await eager.run_job(orphan.id)


async def test_enqueue_many_runs_each_due_job_and_handlers_may_enqueue(eager):
    async def parent(job):
        child = await eager.enqueue("child", job.data)
        return child.result

    eager.register("parent", parent)
    eager.register("child", lambda job: job.data + 1)
    jobs = await eager.enqueue_many([{"name": "parent", "data": 1}, {"name": "child", "data": 10}])
    assert [(j.status, j.result) for j in jobs] == [(JobStatus.COMPLETED, 2), (JobStatus.COMPLETED, 11)]


async def test_start_runs_no_worker_in_test_mode(eager):
    await eager.start()
    assert not eager.is_running


async def test_the_process_wide_switch_reaches_a_monque_built_without_the_option(tmp_path):
    async with Monque(f"sqlite:///{tmp_path}/jobs.db") as m:
        m.register("x", lambda job: "ran")
        assert not m.in_test_mode
        assert (await m.enqueue("x")).status is JobStatus.PENDING
        with test_mode():
            assert test_mode_active() and m.in_test_mode
            assert (await m.enqueue("x")).result == "ran"
        assert not test_mode_active()
        with pytest.raises(ConnectionError, match="for test mode only"):
            await m.run_job((await m.enqueue("x")).id)


def test_sync_client_in_test_mode(tmp_path):
    with SyncMonque(f"sqlite:///{tmp_path}/jobs.db", test_mode=True) as client:
        client.register("shout", lambda job: job.data.upper())
        jobs = [client.enqueue("shout", f"hi {n}") for n in range(40)]  # past the thread path's streak
        assert {job.status for job in jobs} == {JobStatus.COMPLETED}
        assert client.wait(jobs[-1].id, timeout=5).result == "HI 39"
        assert [j.result for j in client.enqueue_many([{"name": "shout", "data": "a"}])] == ["A"]


def test_sync_client_registered_before_open_and_a_bad_registration_raises(tmp_path):
    client = SyncMonque(f"sqlite:///{tmp_path}/jobs.db", test_mode=True)
    try:
        with pytest.raises(InvalidJobIdentifierError, match="bad name"):
            client.register("bad name", lambda job: None)
        client.register("ok", lambda job: 1)
        assert client.enqueue("ok").result == 1
    finally:
        client.close()


# -- the pytest plugin, as an application's tests use it -------------------------------------------
def test_plugin_monque_sync_fixture(monque_sync):
    monque_sync.register("add", lambda job: sum(job.data))
    assert monque_sync.enqueue("add", [1, 2, 3]).result == 6


def test_plugin_monque_test_mode_fixture_reaches_an_application_client(monque_test_mode, monque_test_url):
    app_client = SyncMonque(monque_test_url)  # as an application builds it, no test option
    try:
        app_client.register("x", lambda job: "inline")
        assert app_client.enqueue("x").result == "inline"
    finally:
        app_client.close()


def test_without_the_fixture_nothing_runs_inline(monque_test_url):
    assert not test_mode_active()
    client = SyncMonque(monque_test_url)
    try:
        client.register("x", lambda job: "inline")
        assert client.enqueue("x").status is JobStatus.PENDING
    finally:
        client.close()


async def test_enqueues_made_together_each_return_their_finished_job(eager):
    """One call's inline claim may take another call's job; that call waits for the run."""
    import asyncio

    async def slow(job):
        await asyncio.sleep(0.01)
        return job.data

    from datetime import UTC, datetime, timedelta

    eager.register("slow", slow)
    now = datetime.now(UTC)
    # Later calls hold earlier due times, so an earlier call's claim takes a later call's job.
    calls = (eager.enqueue("slow", n, run_at=now - timedelta(minutes=n)) for n in range(20))
    jobs = await asyncio.gather(*calls)
    assert [(job.status, job.result) for job in jobs] == [(JobStatus.COMPLETED, n) for n in range(20)]


def _forked_child(client: SyncMonque, report) -> None:
    job = client.enqueue("where", None)
    report.send((job.status.value, job.result))
    client.close()


def test_a_forked_child_keeps_the_sync_clients_handlers(tmp_path):
    """The child builds a Monque of its own (never its parent's): the registrations come along."""
    import multiprocessing
    import os

    client = SyncMonque(f"sqlite:///{tmp_path}/jobs.db", test_mode=True)
    try:
        client.register("where", lambda job: os.getpid())
        assert client.enqueue("where").result == os.getpid()  # opened in the parent
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_forked_child, args=(client, send))
        child.start()
        assert receive.poll(120), "the child never reported"
        status, result = receive.recv()
        child.join(60)
        assert child.exitcode == 0 and status == "completed" and result == child.pid
    finally:
        client.close()
