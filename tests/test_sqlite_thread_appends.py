"""Synchronous producers' threads appending at once share one commit (store/sqlite/threadappends.py).

The gate is held by the test while the threads queue their rows, as the write thread or
another producer would hold it; once it is let go, the first thread to take it commits
every queued row, and the others find theirs written (or the batch's error).
"""

from __future__ import annotations

import gc
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError, SyncMonque
from monque_engine.store.sqlite import threadappends
from monque_engine.store.sqlite.threadappends import Append, ThreadAppends
from monque_engine.sync import client as sync_client

THREADS = 4


@pytest.fixture(autouse=True, params=["eventfd", "semaphore"])
def wakes_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test with both kinds of ``Wakes``: Linux's eventfd and the portable semaphore."""
    if request.param == "eventfd" and not hasattr(os, "eventfd"):
        pytest.skip("no os.eventfd on this platform")
    monkeypatch.setattr(threadappends, "EVENTFD", request.param == "eventfd")
    return str(request.param)


def wait_queued(appends: ThreadAppends, count: int = THREADS) -> None:
    """Until ``count`` rows are queued: their threads wait behind a held gate, inside the
    appends, where there is no event to await."""
    deadline = time.monotonic() + 30
    while len(appends._queued) < count:
        assert time.monotonic() < deadline, "the threads never queued"
        time.sleep(0.001)


def _queue_behind_the_gate(outcome: Any) -> tuple[list[list[Append]], list[Any]]:
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    batches: list[list[Append]] = []
    results: list[Any] = []

    def commit(batch: list[Append]) -> Any:
        batches.append(batch)
        return outcome

    def append(index: int) -> None:
        try:
            results.append(appends.append("INSERT", (index,), commit))
        except BaseException as error:  # noqa: BLE001 - compared below
            results.append(error)

    gate.acquire()
    threads = [threading.Thread(target=append, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    wait_queued(appends)  # every thread has queued its row and waits for the gate
    gate.release()
    for thread in threads:
        thread.join(30)
    return batches, results


def recording_commit() -> tuple[list[list[Any]], Callable[[list[Append]], Any]]:
    """A committer that writes nothing and records each batch's first parameters."""
    batches: list[list[Any]] = []

    def commit(batch: list[Append]) -> Any:
        batches.append([row.params[0] for row in batch])
        return True

    return batches, commit


def test_rows_queued_while_the_gate_is_held_are_committed_in_one_batch() -> None:
    batches, results = _queue_behind_the_gate(True)
    assert len(batches) == 1 and sorted(row.params[0] for row in batches[0]) == list(range(THREADS))
    assert results == [True] * THREADS


def test_a_batch_of_followers_is_woken_by_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The leader wakes every follower of its batch with one call (one eventfd write, which
    lets go of the GIL while the kernel wakes them), not with one lock release a row."""
    calls: list[int] = []
    wake = threadappends.Wakes.wake

    def counted(self: threadappends.Wakes, count: int) -> None:
        calls.append(count)
        wake(self, count)

    monkeypatch.setattr(threadappends.Wakes, "wake", counted)
    batches, results = _queue_behind_the_gate(True)
    assert len(batches) == 1 and results == [True] * THREADS
    assert calls == [THREADS - 1]  # the leader's own row sleeps nowhere


def test_the_semaphores_are_reused_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of hundreds of batches sleep on a few semaphores, each used again once all its
    sleepers woke; once the appends are gone, every one of them is closed."""
    made: list[int] = []
    closed: list[int] = []
    init, close = threadappends.Wakes.__init__, threadappends.Wakes.close

    def recorded_init(self: threadappends.Wakes) -> None:
        init(self)
        made.append(id(self))

    def recorded_close(self: threadappends.Wakes, *args: Any) -> None:
        if self.fd >= 0 or self.semaphore is not None:
            closed.append(id(self))
        close(self, *args)

    monkeypatch.setattr(threadappends.Wakes, "__init__", recorded_init)
    monkeypatch.setattr(threadappends.Wakes, "close", recorded_close)

    def exercise() -> None:  # the appends live in here only
        gate = threading.Lock()
        appends = ThreadAppends(gate)
        batches, commit = recording_commit()
        rounds = 50
        start = threading.Barrier(THREADS + 1)

        def run() -> None:
            for index in range(rounds):
                start.wait(30)
                appends.append("INSERT", (index,), commit)

        threads = [threading.Thread(target=run) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for round_ in range(rounds):  # each round: every thread's row queued behind the gate, one batch
            gate.acquire()
            start.wait(30)
            wait_queued(appends)
            gate.release()
            deadline = time.monotonic() + 30
            while len(batches) <= round_:  # committed before the gate is held again
                assert time.monotonic() < deadline, "the batch was never committed"
                time.sleep(0.001)
        for thread in threads:
            thread.join(30)
        assert not any(thread.is_alive() for thread in threads), "an append hung"
        assert appends.rows == rounds * THREADS and len(batches) == rounds
        # A thread sleeps in one generation at a time, so at most THREADS have sleepers, and one
        # more takes rows: 50 batches of followers slept on no more semaphores than that.
        assert 0 < len(made) <= THREADS + 1

    exercise()
    gc.collect()
    assert sorted(closed) == sorted(made)  # each collected and closed (``__del__``)


def test_every_thread_of_a_refused_or_failed_batch_is_told() -> None:
    _, refused = _queue_behind_the_gate(False)
    assert refused == [False] * THREADS  # each then inserts its job through the loop
    error = ConnectionError("SQLite database /x/jobs.db: disk I/O error")
    batches, failed = _queue_behind_the_gate(error)
    assert len(batches) == 1 and failed == [error] * THREADS


def test_a_store_held_by_another_process_is_not_waited_for_by_the_thread_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Busy: the append writes nothing and says so, and the enqueue takes the usual path."""
    monkeypatch.setattr(sync_client, "STREAK", 0)
    monkeypatch.setattr(sync_client, "STREAK_GAP", 60.0)
    path = tmp_path / "jobs.db"
    monque = SyncMonque(f"sqlite:///{path}?busy_timeout=30")
    monque.enqueue("first", {})
    opened = monque._opened
    assert opened is not None
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        job = opened.intake.build("held", {})
        assert opened.monque.store.append_from_thread(job) is False
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert monque.get_job(job.id) is None  # nothing was written
    monque.enqueue("after", {})
    assert monque.count_jobs() == 2
    monque.close()


def _second_row_queued_during_the_first_commit(first_outcome: Any) -> list[tuple[str, list[int]]]:
    """The main thread leads and commits its row; meanwhile thread ``second`` queues one. Who
    committed which rows, in order."""
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    committed: list[tuple[str, list[int]]] = []
    second = threading.Thread(target=lambda: appends.append("INSERT", (2,), commit), name="second")

    def commit(batch: list[Append]) -> Any:
        committed.append((threading.current_thread().name, [row.params[0] for row in batch]))
        if len(committed) == 1:
            second.start()
            deadline = time.monotonic() + 30
            while not appends._queued:  # the second row is queued, its thread waits as a follower
                assert time.monotonic() < deadline, "the second thread never queued"
                time.sleep(0.001)
            return first_outcome
        return True

    appends.append("INSERT", (1,), commit)
    second.join(30)
    return committed


@pytest.mark.parametrize("first_outcome", [True, False])
def test_a_row_queued_during_a_commit_is_committed_next_by_its_own_thread(first_outcome: Any) -> None:
    """The leader does not work on for others once its own row is settled: it hands the lead to
    the oldest row queued meanwhile, whose thread is woken to commit it."""
    assert _second_row_queued_during_the_first_commit(first_outcome) == [("MainThread", [1]), ("second", [2])]


def test_the_next_leader_waits_for_the_threads_of_the_last_batch_that_are_on_their_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Threads in a tight run (each back at once) have their next rows committed together: the
    first one back leads and waits until the last one back wakes it, instead of committing its
    own row alone while the others are still on their way (issue 38: 8 threads >= 1)."""
    monkeypatch.setattr(threadappends, "QUICK", 60.0)  # every thread back after a row counts as quick
    monkeypatch.setattr(threadappends, "CROWD_WAIT", 60.0)  # and is waited for: no timing in the test
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    batches: list[list[tuple[str, int]]] = []
    warmed, gate_held = threading.Barrier(THREADS + 1), threading.Barrier(THREADS + 1)

    def commit(batch: list[Append]) -> Any:
        batches.append(sorted(row.params for row in batch))
        return True

    def run(index: int) -> None:
        appends.append("INSERT", ("warm-up", index), commit)  # a first row: its thread is not quick yet
        warmed.wait()
        gate_held.wait()
        appends.append("INSERT", ("a", index), commit)  # quick, all behind the held gate: one batch
        appends.append("INSERT", ("b", index), commit)  # back at once: the crowd's next batch

    threads = [threading.Thread(target=run, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    warmed.wait(30)
    gate.acquire()
    gate_held.wait(30)
    wait_queued(appends)
    gate.release()
    for thread in threads:
        thread.join(30)
    assert batches[-2:] == [[("a", index) for index in range(THREADS)], [("b", index) for index in range(THREADS)]]
    assert appends.rows == 3 * THREADS


def test_a_thread_that_does_not_come_back_is_waited_for_only_so_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its run ended: the leader commits without it once ``CROWD_WAIT`` has passed, and from
    then on awaits only the threads of its own batch."""
    monkeypatch.setattr(threadappends, "QUICK", 60.0)
    monkeypatch.setattr(threadappends, "CROWD_WAIT", 0.05)
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    batches, commit = recording_commit()

    def short_run() -> None:
        appends.append("INSERT", ("b1",), commit)
        appends.append("INSERT", ("b2",), commit)  # quick: the next leader awaits this thread

    assert appends.append("INSERT", ("a",), commit)
    ended = threading.Thread(target=short_run)
    ended.start()
    ended.join(30)
    assert appends._awaited == {ended.ident}
    assert appends.append("INSERT", ("c",), commit)  # awaits the ended thread, then commits alone
    assert batches == [["a"], ["b1"], ["b2"], ["c"]]
    assert appends._awaited == {threading.get_ident()}


# -- on a real store: many threads' rows in fewer transactions, and a failed batch told to all --


def _thread_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SyncMonque, Any, Any]:
    """A client whose every enqueue takes the thread path; its store's runner and appends."""
    monkeypatch.setattr(sync_client, "STREAK", 0)
    monkeypatch.setattr(sync_client, "STREAK_GAP", 60.0)
    monque = SyncMonque(f"sqlite:///{tmp_path / 'jobs.db'}")
    monque.enqueue("first", {})
    opened = monque._opened
    assert opened is not None
    store: Any = opened.monque.store  # the SQLite store's own parts
    writer = store._writer
    return monque, writer, writer._thread_appends


def _enqueue_from_threads_behind_the_gate(monque: SyncMonque, writer: Any, names: list[str]) -> list[Any]:
    """Each name enqueued by a thread of its own while the test holds the write gate (as the
    write thread or another producer would); the gate is let go once every row is queued.
    Each thread's outcome: its Job, or what it raised."""
    appends = writer._thread_appends
    outcomes: list[Any] = [None] * len(names)

    def enqueue(index: int) -> None:
        try:
            outcomes[index] = monque.enqueue(names[index], {"i": index})
        except BaseException as error:  # noqa: BLE001 - compared below
            outcomes[index] = error

    threads = [threading.Thread(target=enqueue, args=(index,)) for index in range(len(names))]
    writer._gate.acquire()
    try:
        for thread in threads:
            thread.start()
        wait_queued(appends, len(names))  # every thread waits for the gate, its row queued
    finally:
        writer._gate.release()
    for thread in threads:
        thread.join(30)
    return outcomes


def test_rows_of_many_threads_are_committed_in_fewer_transactions_than_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monque, writer, appends = _thread_path(tmp_path, monkeypatch)
    commits, rows = appends.commits, appends.rows
    outcomes = _enqueue_from_threads_behind_the_gate(monque, writer, [f"job-{index}" for index in range(8)])
    assert all(not isinstance(outcome, BaseException) for outcome in outcomes), outcomes
    assert appends.rows - rows == 8
    assert appends.commits - commits == 1  # every row was queued before the gate was let go
    stored = {job.name for job in monque.get_jobs(limit=100)}
    assert stored == {"first"} | {f"job-{index}" for index in range(8)}
    monque.close()


def test_an_error_in_a_batch_reaches_every_caller_of_that_batch_and_loses_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One row the database refuses (a trigger) fails its whole transaction: every thread of
    that batch raises the error, none of their jobs is stored, and what was committed before
    and after is there."""
    monque, writer, appends = _thread_path(tmp_path, monkeypatch)
    before = [monque.enqueue(f"before-{index}", {}) for index in range(3)]
    opened = monque._opened
    assert opened is not None
    store: Any = opened.monque.store
    inbox_table = store._producer.inbox.append_sql.split()[2]  # INSERT INTO <table> ...
    poisoner = sqlite3.connect(tmp_path / "jobs.db", isolation_level=None)
    poisoner.execute(
        f"CREATE TRIGGER poison BEFORE INSERT ON {inbox_table} WHEN NEW.name = 'poison' "
        "BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
    )
    commits = appends.commits
    names = ["poison"] + [f"mate-{index}" for index in range(5)]
    outcomes = _enqueue_from_threads_behind_the_gate(monque, writer, names)
    # Every row was queued before the gate was let go, so one transaction took them all.
    assert all(isinstance(outcome, ConnectionError) and "poisoned row" in str(outcome) for outcome in outcomes), (
        outcomes
    )
    assert appends.commits == commits
    poisoner.execute("DROP TRIGGER poison")
    poisoner.close()
    after = [monque.enqueue(f"after-{index}", {}) for index in range(3)]
    stored = {job.name for job in monque.get_jobs(limit=100)}
    assert stored == {"first"} | {job.name for job in before + after}
    monque.close()


def test_an_interrupted_follower_withdraws_its_row_and_leaves_nobody_waiting() -> None:
    """Ctrl-C in the main thread while it waits as a follower: its row leaves the queue (it is
    not written) and the other threads go on."""
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    batches, commit = recording_commit()

    def interrupt_main() -> None:
        wait_queued(appends, 2)  # the leader waits for the gate, main follows
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    gate.acquire()
    leader = threading.Thread(target=lambda: appends.append("INSERT", ("leader",), commit))
    leader.start()
    wait_queued(appends, 1)
    interrupter = threading.Thread(target=interrupt_main)
    interrupter.start()
    with pytest.raises(KeyboardInterrupt):
        appends.append("INSERT", ("main",), commit)
    interrupter.join(30)
    assert [row.params[0] for row in appends._queued] == ["leader"]
    gate.release()
    leader.join(30)
    later = threading.Thread(target=lambda: appends.append("INSERT", ("later",), commit))
    later.start()
    later.join(30)
    assert not later.is_alive(), "a later append hung"
    assert batches == [["leader"], ["later"]]


def test_a_follower_interrupted_as_it_takes_the_lead_passes_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C lands in the main thread just as its wait returns with the lead token (the read
    done, the token gone): the row queued beside it still gets a leader and is committed,
    and the main thread's row is not written. Before, that thread took the lead away with it
    and the other thread slept for ever."""
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    committing, let_commit, late_may_sleep = threading.Event(), threading.Event(), threading.Event()
    batches: list[list[Any]] = []
    late: list[Any] = []
    late_thread: list[threading.Thread] = []
    main = threading.main_thread()
    interrupted: list[bool] = []
    real_wait = threadappends.Wakes.wait

    def wait(self: threadappends.Wakes) -> None:
        if threading.current_thread().name == "late":
            late_may_sleep.wait(30)  # asleep only after the main thread took the token
        real_wait(self)
        if threading.current_thread() is main and not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt  # as a signal handler raises it when the read returns

    monkeypatch.setattr(threadappends.Wakes, "wait", wait)

    def commit(batch: list[Append]) -> bool:
        batches.append([row.params[0] for row in batch])
        if len(batches) == 1:
            committing.set()
            let_commit.wait(30)  # rows queued now go to the next batch, led by one of theirs
        return True

    def orchestrate() -> None:
        wait_queued(appends, 1)  # the main thread's row, queued during the first commit
        late_thread.append(
            threading.Thread(target=lambda: late.append(appends.append("INSERT", ("late",), commit)), name="late")
        )
        late_thread[0].start()
        wait_queued(appends, 2)
        let_commit.set()  # the first batch settles and passes the lead to the queued rows

    first = threading.Thread(target=lambda: appends.append("INSERT", ("first",), commit))
    first.start()
    assert committing.wait(30)
    threading.Thread(target=orchestrate).start()
    with pytest.raises(KeyboardInterrupt):
        appends.append("INSERT", ("main",), commit)
    late_may_sleep.set()
    late_thread[0].join(30)
    assert late == [True], "the thread queued beside the interrupted one was left without a leader"
    assert batches == [["first"], ["late"]]
    first.join(30)


def test_a_leader_interrupted_before_it_takes_the_batch_passes_the_lead_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C lands in the main thread after it became the leader and before it took the
    batch: its row is not written, and the rows queued behind it are led and committed by
    one of their own threads. Before, the lead stayed with the gone thread and every later
    append waited for ever."""
    gate = threading.Lock()
    appends = ThreadAppends(gate)
    batches, commit = recording_commit()
    main = threading.main_thread()
    real_lead = ThreadAppends._lead

    def lead(self: ThreadAppends, row: Append, commit: Callable[[list[Append]], Any]) -> None:
        if threading.current_thread() is main:
            wait_queued(self, 3)  # two followers queued behind the main thread's row
            raise KeyboardInterrupt
        real_lead(self, row, commit)

    monkeypatch.setattr(ThreadAppends, "_lead", lead)
    results: list[Any] = []
    followers = [
        threading.Thread(target=lambda n=n: results.append(appends.append("INSERT", (n,), commit))) for n in ("x", "y")
    ]

    def start_followers() -> None:
        wait_queued(appends, 1)
        for follower in followers:
            follower.start()

    threading.Thread(target=start_followers).start()
    with pytest.raises(KeyboardInterrupt):
        appends.append("INSERT", ("main",), commit)
    for follower in followers:
        follower.join(30)
    assert not any(follower.is_alive() for follower in followers), "the rows behind the interrupted leader hung"
    assert results == [True, True]
    assert sorted(row for batch in batches for row in batch) == ["x", "y"]
    later = threading.Thread(target=lambda: results.append(appends.append("INSERT", ("later",), commit)))
    later.start()
    later.join(30)
    assert not later.is_alive() and results[-1] is True
