"""The owner watch behind dead-owner release (issue 25, point 5), on a fake store and clock.

``OwnerWatcher`` calls an owner dead only when its records stay unmoved for twice its own
heartbeat interval plus a margin of monotonic time; it never reads a wall clock. These tests
drive it with a scripted store (each look returns the next state) and a fake monotonic clock
that ``sleep`` advances, so the windows are checked exactly, without waiting.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from monque_engine.job import InstanceRecord, OwnerJobStamp, OwnerRecords
from monque_engine.scheduler.liveness import WATCH_MARGIN_S, OwnerWatcher

DEFAULT_S = 5.0
LOCK_TIMEOUT_S = 1_800.0


def job(job_id: str, beat: int | None, locked: int | None = 1, interval: int | None = 1_000) -> OwnerJobStamp:
    return OwnerJobStamp(job_id, beat, locked, interval)


def record(beat: int, interval: int = 1_000, processed: int = 0) -> InstanceRecord:
    return InstanceRecord("w", "host", 1, "v", 0, interval, {"task": 1}, 1, processed, 0, beat)


def owner(*jobs: OwnerJobStamp, rec: InstanceRecord | None = None) -> OwnerRecords:
    return OwnerRecords("w", rec, tuple(jobs))


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class ScriptedStore:
    """Each look at the owner returns the state for the current fake time (the last one at or before it)."""

    def __init__(self, clock: FakeTime, *states: tuple[float, OwnerRecords]) -> None:
        self.clock = clock
        self.states = list(states)
        self.looks = 0
        self.written: list[OwnerRecords] = []
        self.moved_at_write = False

    def current(self) -> OwnerRecords:
        return [state for at, state in self.states if at <= self.clock.now][-1]

    async def owner_records(self, owner_id: str) -> OwnerRecords:
        self.looks += 1
        return self.current()

    async def release_unmoved_owner(self, owner_id: str, expected: OwnerRecords, now_ms: int) -> int | None:
        self.written.append(expected)
        if self.moved_at_write or self.current().moved_since(expected):
            return None
        return len(self.current().jobs)


def watcher(store: ScriptedStore, clock: FakeTime, longest_s: float = LOCK_TIMEOUT_S) -> OwnerWatcher:
    return OwnerWatcher(lambda: store, DEFAULT_S, longest_s, monotonic=clock.monotonic, sleep=clock.sleep)


# -- the window follows the owner's own interval ---------------------------------------------------------
@pytest.mark.parametrize(
    ("records", "window"),
    [
        (owner(job("a", 10, interval=1_000)), 2 * 1.0 + WATCH_MARGIN_S),  # a Node owner: its jobs' interval
        (owner(job("a", 10, interval=1_000), rec=record(10, interval=30_000)), 2 * 30.0 + WATCH_MARGIN_S),
        (owner(job("a", 10, interval=None)), 2 * DEFAULT_S + WATCH_MARGIN_S),  # a foreign claim: ours
        (owner(job("a", 10, interval=10**12)), LOCK_TIMEOUT_S),  # never longer than lock_timeout
    ],
    ids=["jobs-interval", "record-interval-larger", "no-interval", "capped"],
)
def test_the_window_is_twice_the_owners_own_interval_plus_the_margin(records: OwnerRecords, window: float) -> None:
    clock = FakeTime()
    assert watcher(ScriptedStore(clock), clock).window(records) == window


# -- verdicts ----------------------------------------------------------------------------------------------
async def test_an_owner_whose_records_do_not_move_is_dead_after_the_whole_window() -> None:
    clock = FakeTime()
    still = owner(job("a", 10), job("b", 10))
    store = ScriptedStore(clock, (0, still))
    check = await watcher(store, clock).check("w")
    assert (check.alive, check.releasable) == (False, 2)
    assert check.watched >= 2 * 1.0 + WATCH_MARGIN_S
    assert sum(clock.slept) >= 2 * 1.0 + WATCH_MARGIN_S


async def test_a_beat_during_the_watch_is_alive_at_the_next_look_without_waiting_the_window() -> None:
    clock = FakeTime()
    # Stamps look hours old by any clock, but they move every 0.5 s: that is what a live owner does.
    store = ScriptedStore(clock, *((100 + 0.5 * k, owner(job("a", 10 + k))) for k in range(100)))
    watch = watcher(store, clock)
    check = await watch.check("w")
    assert (check.alive, check.releasable) == (True, 0)
    assert clock.now < 100 + 2 * 1.0 + WATCH_MARGIN_S
    assert await watch.release("w", 0) == 0
    assert store.written == []  # nothing was even tried


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (owner(job("a", 10), rec=record(10)), owner(job("a", 10), rec=record(11))),  # the record's beat
        (owner(job("a", 10), rec=record(10)), owner(job("a", 10), rec=record(10, processed=1))),  # its counts
        (owner(job("a", 10)), owner(job("a", 10), rec=record(10))),  # it registered
        (owner(job("a", 10)), owner(job("a", 10), job("b", None, locked=20))),  # it claimed a job
        (owner(job("a", 10)), owner(job("a", 10, locked=30))),  # it claimed the same job again
        (owner(job("a", 50)), owner(job("a", 40))),  # its clock was set back: a beat still moves
    ],
    ids=["record-beat", "record-counts", "record-appears", "new-claim", "reclaimed", "beat-backwards"],
)
def test_what_counts_as_a_sign_of_life(before: OwnerRecords, after: OwnerRecords) -> None:
    assert after.moved_since(before)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (owner(job("a", 10), job("b", 10)), owner(job("a", 10))),  # a job taken away by someone else
        (owner(job("a", 10), rec=record(10)), owner(job("a", 10))),  # the record purged or removed
        (owner(job("a", 10), rec=record(10)), owner(job("a", 10), rec=record(10))),
    ],
    ids=["job-gone", "record-gone", "unchanged"],
)
def test_what_does_not(before: OwnerRecords, after: OwnerRecords) -> None:
    assert not after.moved_since(before)


async def test_a_release_after_a_count_continues_the_watch_instead_of_waiting_again() -> None:
    clock = FakeTime()
    store = ScriptedStore(clock, (0, owner(job("a", 10), job("b", 10))))
    watch = watcher(store, clock)
    assert (await watch.check("w")).releasable == 2
    slept = sum(clock.slept)
    clock.now += 30  # the operator reads the question
    assert await watch.release("w", 0) == 2
    assert sum(clock.slept) == slept
    assert store.written == [owner(job("a", 10), job("b", 10))]


async def test_a_watch_is_continued_only_while_nothing_moved() -> None:
    clock = FakeTime()
    store = ScriptedStore(clock, (0, owner(job("a", 10))), (110, owner(job("a", 12))))
    watch = watcher(store, clock)
    assert not (await watch.check("w")).alive
    clock.now = 120  # it beat once at 110, then nothing: a whole new watch, from this look
    slept = sum(clock.slept)
    check = await watch.check("w")
    assert not check.alive and check.releasable == 1
    assert sum(clock.slept) - slept >= 2 * 1.0 + WATCH_MARGIN_S


async def test_a_beat_between_the_last_look_and_the_write_releases_nothing() -> None:
    clock = FakeTime()
    store = ScriptedStore(clock, (0, owner(job("a", 10))))
    store.moved_at_write = True
    assert await watcher(store, clock).release("w", 0) == 0
    assert store.written == [owner(job("a", 10))]


async def test_an_owner_with_nothing_is_answered_at_once() -> None:
    clock = FakeTime()
    store = ScriptedStore(clock, (0, owner()))
    check = await watcher(store, clock).check("w")
    assert (check.alive, check.releasable, clock.slept) == (False, 0, [])


async def test_a_registered_owner_holding_nothing_is_still_watched() -> None:
    clock = FakeTime()
    rec = record(10)
    store = ScriptedStore(clock, (0, owner(rec=rec)), (100.4, owner(rec=replace(rec, last_heartbeat_ms=11))))
    assert (await watcher(store, clock).check("w")).alive


async def test_a_look_when_first_seen_dead_lets_the_release_act_at_once() -> None:
    """Issue 40: the release watched for the whole window when asked, even for an owner silent
    for 14 minutes. Looks from the Workers view start the watch; x then waits for nothing."""
    clock = FakeTime()
    still = owner(job("a", 10), job("b", 10))
    store = ScriptedStore(clock, (0, still))
    watch = watcher(store, clock)
    window = 2 * 1.0 + WATCH_MARGIN_S
    assert await watch.look("w") == pytest.approx(window)
    clock.now += 1.0
    assert await watch.look("w") == pytest.approx(window - 1.0)  # the countdown the view shows
    clock.now += window
    assert await watch.look("w") == 0.0
    assert await watch.release("w", 0) == 2
    assert clock.slept == []  # no watch when asked: it had run its course


async def test_a_look_that_sees_a_beat_starts_the_countdown_again() -> None:
    clock = FakeTime()
    store = ScriptedStore(clock, (0, owner(job("a", 10))), (102, owner(job("a", 11))))
    watch = watcher(store, clock)
    window = 2 * 1.0 + WATCH_MARGIN_S
    await watch.look("w")
    clock.now = 102.5
    assert await watch.look("w") == pytest.approx(window)
