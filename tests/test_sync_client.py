"""``SyncMonque``: the queue from synchronous code (issue 38, part 1).

Real SQLite files, real threads, a real ``fork``, and a real interpreter exit; the
MongoDB cases need no server (construction, an unreachable one, the masked password).
"""

from __future__ import annotations

import asyncio
import inspect
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import traceback
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from monque_engine import (
    ConnectionError,
    InvalidCronError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    InvalidOptionError,
    InvalidStoreUrlError,
    JobSelector,
    JobStatus,
    Monque,
    PayloadValidationError,
    SyncMonque,
)
from monque_engine.sync import client as sync_client
from monque_engine.sync import loop as sync_loop

#: The async methods the sync client mirrors, name for name and argument for argument.
MIRRORED = [
    "enqueue", "now", "schedule", "enqueue_many",
    "get_job", "get_jobs_by_id", "get_jobs", "get_jobs_with_cursor", "count_jobs", "get_queue_stats",
    "job_names", "error_groups",
    "cancel_job", "retry_job", "reschedule_job", "delete_job",
    "cancel_jobs", "retry_jobs", "delete_jobs", "count_bulk",
    "pause", "resume", "paused", "instances", "queue_health",
]  # fmt: skip


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


def _table_counts(path: Path) -> tuple[int, int]:
    """Jobs in the job table and in the inbox, read with plain sqlite3 (as other tools do)."""
    with sqlite3.connect(path) as conn:
        table = conn.execute("SELECT count(*) FROM monque_jobs").fetchone()[0]
        inbox = conn.execute("SELECT count(*) FROM monque_jobs_inbox").fetchone()[0]
    return table, inbox


def test_every_mirrored_method_takes_the_async_methods_arguments() -> None:
    for name in MIRRORED:
        sync_params = list(inspect.signature(getattr(SyncMonque, name)).parameters.values())
        async_params = list(inspect.signature(getattr(Monque, name)).parameters.values())
        assert [(p.name, p.kind, p.default) for p in sync_params] == [
            (p.name, p.kind, p.default) for p in async_params
        ], name
        assert not inspect.iscoroutinefunction(getattr(SyncMonque, name)), name


def test_enqueue_read_and_manage_from_synchronous_code(tmp_path: Path) -> None:
    with SyncMonque(_url(tmp_path)) as monque:
        job = monque.enqueue("email.send", {"to": "ada@example.com"})
        later = monque.enqueue("email.send", {"to": "alan@example.com"}, run_at=timedelta(minutes=10))
        keyed = monque.enqueue("report", {"n": 1}, unique_key="daily")
        assert monque.enqueue("report", {"n": 2}, unique_key="daily").id == keyed.id
        scheduled = monque.schedule("0 9 * * 1", "digest", {"team": 1}, unique_key="weekly", tz="Europe/Paris")
        many = monque.enqueue_many([{"name": "bulk", "data": {"i": i}} for i in range(5)])
        now = monque.now("ping")

        assert monque.get_job(job.id) == job
        assert monque.get_job(later.id).next_run_at_ms > job.next_run_at_ms  # type: ignore[union-attr]
        assert scheduled.repeat_interval is not None and scheduled.timezone == "Europe/Paris"
        assert set(monque.get_jobs_by_id([m.id for m in many])) == {m.id for m in many}
        assert {j.id for j in monque.get_jobs(name="bulk")} == {m.id for m in many}
        assert monque.count_jobs() == 10
        assert monque.get_queue_stats().pending == 10
        assert monque.get_jobs_with_cursor(limit=3).has_next_page
        assert monque.job_names() == ["bulk", "digest", "email.send", "ping", "report"]

        assert monque.cancel_job(now.id).status is JobStatus.CANCELLED  # type: ignore[union-attr]
        assert monque.retry_job(now.id).status is JobStatus.PENDING  # type: ignore[union-attr]
        assert monque.reschedule_job(now.id, timedelta(hours=1)) is not None
        assert monque.delete_job(now.id) is True
        count = monque.count_bulk("cancel", JobSelector(name="bulk"))
        assert count == 5
        assert monque.cancel_jobs(JobSelector(name="bulk"), as_of=count).count == 5
        assert monque.retry_jobs(JobSelector(name="bulk")).count == 5
        assert monque.delete_jobs(JobSelector(name="bulk")).count == 5
        assert monque.pause("report") is True and "report" in monque.paused()
        assert monque.resume("report") is True
        assert monque.error_groups() == []
        assert monque.queue_health()
        assert monque.instances() == []  # a producer registers no instance: it runs nothing
        assert monque.count_jobs() == 4


def test_threads_enqueue_at_once_and_every_job_lands_once(tmp_path: Path) -> None:
    monque = SyncMonque(_url(tmp_path))
    per_thread, threads = 300, 8
    ids: list[list[str]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def produce(index: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                ids[index].append(monque.enqueue("work", {"thread": index, "i": i}).id)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=produce, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    every = [job_id for chunk in ids for job_id in chunk]
    assert len(set(every)) == per_thread * threads
    assert monque.count_jobs() == per_thread * threads  # reads see every job, inbox or not
    stored = monque.get_jobs_by_id(every)
    assert sorted((job.data["thread"], job.data["i"]) for job in stored.values()) == [
        (t, i) for t in range(threads) for i in range(per_thread)
    ]
    monque.close()
    assert _table_counts(tmp_path / "jobs.db") == (per_thread * threads, 0)  # all in the job table


def test_a_threads_run_of_enqueues_appends_from_that_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past STREAK calls in a row, a plain enqueue is stored by the calling thread (the
    inbox), without a hand-over to the loop; reads see each job at once; close moves them."""
    monque = SyncMonque(_url(tmp_path))
    handed_over: list[str] = []
    real_run = sync_loop.BackgroundLoop.run

    def counting_run(self: sync_loop.BackgroundLoop, coro: Any) -> Any:
        handed_over.append(coro.__qualname__)
        return real_run(self, coro)

    monkeypatch.setattr(sync_loop.BackgroundLoop, "run", counting_run)
    monkeypatch.setattr(sync_client, "STREAK_GAP", 60.0)  # every call continues the run, however slow the machine
    jobs = [monque.enqueue("run", {"i": i}) for i in range(sync_client.STREAK + 50)]
    enqueues = handed_over.count("Monque.enqueue")
    assert enqueues == sync_client.STREAK  # the run's first calls; the 50 after it were appended here
    assert monque.get_job(jobs[-1].id) == jobs[-1]
    assert monque.count_jobs() == len(jobs)
    keyed = monque.enqueue("run", {"k": 1}, unique_key="k")  # a unique key is checked under the write lock
    assert handed_over.count("Monque.enqueue") == enqueues + 1
    # A job's own time limit has no inbox column: it goes through the loop, and is kept.
    limited = monque.enqueue("run", {"t": 1}, timeout=5)
    assert handed_over.count("Monque.enqueue") == enqueues + 2
    assert limited.timeout_ms == 5000
    monque.close()
    assert _table_counts(tmp_path / "jobs.db") == (len(jobs) + 2, 0)
    assert keyed.unique_key == "k"
    with SyncMonque(_url(tmp_path)) as reopened:
        stored = reopened.get_job(limited.id)
        assert stored is not None and stored.timeout_ms == 5000


def test_a_call_in_progress_in_another_thread_continues_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads of a pool wait on one another (a shared commit, the GIL, the loop's absorb):
    a call that starts while another thread's call is in progress continues the run however
    long since the latest return, instead of starting a new one (32 calls through the loop)."""
    monkeypatch.setattr(sync_client, "STREAK_GAP", -1.0)  # the time since a return never continues a run
    monque = SyncMonque(_url(tmp_path)).open()
    opened = monque._opened
    assert opened is not None
    entered, release = threading.Event(), threading.Event()
    real_enqueue = opened.monque.enqueue
    calls: list[str] = []

    async def held_first(name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        if len(calls) == 1:  # the other thread's call: in progress until released
            entered.set()
            await asyncio.to_thread(release.wait, 30)
        return await real_enqueue(name, *args, **kwargs)

    monkeypatch.setattr(opened.monque, "enqueue", held_first)
    other = threading.Thread(target=lambda: monque.enqueue("in-progress", {}))
    other.start()
    assert entered.wait(30)
    monque.enqueue("meanwhile", {})
    assert monque._run_of.count == 2  # continued the other call's run (the old rule: 1, a new run)
    release.set()
    other.join(30)
    assert not other.is_alive()
    monque.enqueue("after", {})  # nothing in progress, and the gap rule is off: a new run
    assert monque._run_of.count == 1
    assert monque.count_jobs() == 3
    monque.close()


def test_a_lone_enqueue_writes_the_job_row(tmp_path: Path) -> None:
    """A request handler's enqueue is never left in the inbox: plain SQL sees it at once."""
    monque = SyncMonque(_url(tmp_path))
    for i in range(3):
        monque.enqueue("request", {"i": i})
        assert _table_counts(tmp_path / "jobs.db") == (i + 1, 0)
    monque.close()


def test_errors_are_the_async_apis_raised_in_the_calling_thread(tmp_path: Path) -> None:
    async_errors = {}

    async def collect() -> None:
        async with Monque(_url(tmp_path)) as async_monque:
            for label, call in _bad_calls(async_monque).items():
                try:
                    await call
                except Exception as error:  # noqa: BLE001 - compared below
                    async_errors[label] = error

    import asyncio

    asyncio.run(collect())
    with SyncMonque(_url(tmp_path)) as monque:
        for label, call in _bad_calls(monque).items():
            with pytest.raises(type(async_errors[label])) as info:
                call()
            assert str(info.value) == str(async_errors[label]), label
            files = [frame.filename for frame in traceback.extract_tb(info.value.__traceback__)]
            assert not any(f"{os.sep}asyncio{os.sep}" in f or f"{os.sep}concurrent{os.sep}" in f for f in files)
            assert files[0] == __file__ and any("monque_engine" in f for f in files[1:]), files
    assert isinstance(async_errors["name"], InvalidJobIdentifierError)
    assert isinstance(async_errors["cron"], InvalidCronError)
    assert isinstance(async_errors["payload"], PayloadValidationError)
    assert isinstance(async_errors["naive"], InvalidJobQueryError)


def _bad_calls(monque: Any) -> dict[str, Any]:
    """The same bad calls on either client: coroutines from the async one, thunks from the sync."""
    calls = {
        "name": ("enqueue", ("bad name", {})),
        "cron": ("schedule", ("not a cron", "digest", {})),
        "payload": ("enqueue", ("ok", {"x": float("nan")})),
        "naive": ("enqueue", ("ok", {}, datetime(2030, 1, 1))),
        "action": ("count_bulk", ("explode",)),
        "empty-name": ("get_jobs", ("",)),
    }
    if isinstance(monque, SyncMonque):
        return {label: (lambda m=method, a=args: getattr(monque, m)(*a)) for label, (method, args) in calls.items()}
    return {label: getattr(monque, method)(*args) for label, (method, args) in calls.items()}


def test_errors_from_a_run_of_enqueues_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The calling thread's own path validates as the loop's does."""
    monkeypatch.setattr(sync_client, "STREAK", 0)
    monkeypatch.setattr(sync_client, "STREAK_GAP", 60.0)
    with SyncMonque(_url(tmp_path)) as monque:
        monque.enqueue("warm", {})
        with pytest.raises(InvalidJobIdentifierError, match="Invalid job name 'bad name'"):
            monque.enqueue("bad name", {})
        with pytest.raises(InvalidJobQueryError, match="timezone-aware"):
            monque.enqueue("ok", {}, run_at=datetime(2030, 1, 1))
        assert monque.enqueue("ok", {}, run_at=datetime(2030, 1, 1, tzinfo=UTC)).next_run_at.year == 2030
        assert monque.count_jobs() == 2


def test_close_and_the_context_manager(tmp_path: Path) -> None:
    with SyncMonque(_url(tmp_path)) as monque:
        monque.enqueue("a", {})
    assert monque.closed
    with pytest.raises(
        ConnectionError, match=r"SyncMonque is closed \(close\(\) was called\); create a new SyncMonque"
    ):
        monque.enqueue("a", {})
    with pytest.raises(ConnectionError, match="closed"):
        monque.count_jobs()
    monque.close()  # twice: nothing happens
    never_opened = SyncMonque(_url(tmp_path))
    never_opened.close()
    with pytest.raises(ConnectionError, match="closed"):
        never_opened.get_jobs()
    assert SyncMonque(_url(tmp_path)).count_jobs() == 1  # another client still opens the file


def test_bad_arguments_raise_at_construction() -> None:
    with pytest.raises(InvalidStoreUrlError, match="takes a store URL"):
        SyncMonque(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidStoreUrlError):
        SyncMonque("postgres://db")
    with pytest.raises(InvalidOptionError):
        SyncMonque("sqlite:///never.db", max_retries=-1)
    assert not Path("never.db").exists()


def test_a_listener_on_the_loop_cannot_call_the_client_and_deadlock(tmp_path: Path) -> None:
    monque = SyncMonque(_url(tmp_path)).open()
    loop = sync_loop.background_loop()

    async def from_the_loop() -> str:
        try:
            monque.count_jobs()
        except RuntimeError as error:
            return str(error)
        return "no error"

    assert "use the async Monque there" in loop.run(from_the_loop())
    monque.close()


@pytest.mark.parametrize("escaping", [SystemExit, KeyboardInterrupt])
def test_an_async_handler_exiting_in_test_mode_reaches_its_caller_and_spares_the_loop(
    tmp_path: Path, escaping: type[BaseException]
) -> None:
    """asyncio lets ``SystemExit`` and ``KeyboardInterrupt`` out of ``run_forever``: raised by an
    async handler run inline at ``enqueue``, they ended the shared loop's thread, that call
    and every later call of every client in the process waited for ever (a probe)."""
    client = SyncMonque(_url(tmp_path), test_mode=True)

    async def handler(job: Any) -> None:
        raise escaping("from the handler")

    client.register("exits", handler)
    with pytest.raises(escaping, match="from the handler"):
        client.enqueue("exits")
    assert sync_loop.background_loop().thread.is_alive()
    other = SyncMonque(_url(tmp_path))
    assert other.enqueue("after").name == "after"  # the loop still serves every client
    other.close()
    client.close()


def test_a_wait_from_the_loop_a_worker_runs_on_is_refused_not_a_hang(tmp_path: Path) -> None:
    """A coroutine on the loop where a ``Monque`` worker runs (a FastAPI lifespan's) called
    ``SyncMonque.wait``: the loop blocked, the worker never ran the job, and the wait hung for
    ever (or timed out saying no worker ran the name)."""
    client = SyncMonque(_url(tmp_path))

    async def app() -> str:
        async with Monque(_url(tmp_path)) as worker:
            worker.register("work", lambda job: None)
            await worker.start()
            job = client.enqueue("work")
            try:
                client.wait(job.id, timeout=30)
            except RuntimeError as error:
                return str(error)
            return "waited"

    assert "use await monque.wait(job_id) there" in asyncio.run(asyncio.wait_for(app(), 60))
    client.close()


# -- fork ---------------------------------------------------------------------------------------
def _child(monque: SyncMonque, count: int, report: Any) -> None:
    stores = [entry.store for entry in sync_loop.inherited if isinstance(entry, Monque)]
    loops = [entry for entry in sync_loop.inherited if isinstance(entry, sync_loop.BackgroundLoop)]
    jobs = [monque.enqueue("child", {"i": i}) for i in range(count)]
    opened = monque._opened
    assert opened is not None
    report.send(
        {
            "pid": opened.pid == os.getpid(),
            "parent_store_kept_apart": bool(stores) and all(store is not opened.monque.store for store in stores),
            "own_loop": bool(loops) and opened.loop not in loops and opened.loop.thread.is_alive(),
            "ids": [job.id for job in jobs],
        }
    )
    monque.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_client_opened_before_fork_reopens_in_the_child(tmp_path: Path) -> None:
    monque = SyncMonque(_url(tmp_path))
    first = monque.enqueue("parent", {"i": -1})  # opened in the parent: its store, its loop
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(monque, 200, send))
    child.start()
    parent_ids = [monque.enqueue("parent", {"i": i}).id for i in range(200)]  # while the child writes too
    assert receive.poll(120), "the child never reported (it hangs on its parent's loop?)"
    report = receive.recv()
    child.join(60)
    assert child.exitcode == 0
    assert report["pid"] and report["parent_store_kept_apart"] and report["own_loop"]
    every = [first.id, *parent_ids, *report["ids"]]
    assert len(set(every)) == 401
    assert set(monque.get_jobs_by_id(every)) == set(every)
    assert monque.count_jobs() == 401  # the parent's client still works after the fork
    monque.close()
    assert _table_counts(tmp_path / "jobs.db") == (401, 0)


# -- interpreter exit ----------------------------------------------------------------------------
def test_interpreter_exit_closes_the_client_and_moves_its_jobs_into_the_job_table(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import gc
        import sys
        from monque_engine import SyncMonque
        from monque_engine.store.sqlite import inbox
        inbox.THREAD_IDLE = 3600.0  # no absorb on a pause: only every 256 appends, and the close
        monque = SyncMonque({_url(tmp_path)!r})
        for i in range(500):
            monque.enqueue("exit", {{"i": i}})
        if sys.argv[1] == "dropped":
            del monque
            gc.collect()
        # no close(): interpreter exit closes the store, a dropped client's too
        """
    )
    for how, total in (("kept", 500), ("dropped", 1000)):
        subprocess.run([sys.executable, "-c", script, how], check=True, timeout=120)
        assert _table_counts(tmp_path / "jobs.db") == (total, 0), how


# -- MongoDB, without a server ----------------------------------------------------------------------
UNREACHABLE = "mongodb://user:s3cret@127.0.0.1:1/db?serverSelectionTimeoutMS=300"


def test_a_mongodb_client_is_built_without_connecting() -> None:
    monque = SyncMonque(UNREACHABLE)
    assert "s3cret" not in monque.display_url and "s3cret" not in repr(monque)
    assert monque._opened is None
    monque.close()


def test_an_unreachable_mongodb_raises_the_async_error_masked_in_the_calling_thread() -> None:
    import asyncio

    async def async_error() -> ConnectionError:
        with pytest.raises(ConnectionError) as info:
            await Monque(UNREACHABLE).initialize()
        return info.value

    expected = asyncio.run(async_error())
    monque = SyncMonque(UNREACHABLE)
    for _ in range(2):  # a failed open is not remembered: the next call tries again
        with pytest.raises(ConnectionError) as info:
            monque.enqueue("a", {})
        assert str(info.value) == str(expected)
        assert "s3cret" not in str(info.value) and "Failed to initialize Monque" in str(info.value)
    monque.close()
