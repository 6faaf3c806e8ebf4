"""Reliability under faults, load and bad input (issue 6), bounded for ``make test``.

Each test runs one scenario of ``bench/reliability.py`` (the same code, at the ``quick``
sizes there) with real processes on real SQLite files; the ``slow`` variants run the
issue's full sizes (``make test-slow``, or ``python -m bench.reliability`` for the table).
A scenario returns a ``Result`` whose ``violations`` list every broken promise; the test
fails with that list. Every child process is killed at teardown by the scenario's
workspace, whatever happened.

Also here: single-process regression tests for the engine bugs the scenarios found.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # bench.* and tests.procs.* are imported from the repository root
    sys.path.insert(0, str(REPO_ROOT))

from bench.reliability import Result, run_scenario  # noqa: E402
from monque_engine import JobSelector, Monque  # noqa: E402
from monque_engine.errors import InvalidJobIdentifierError, InvalidJobQueryError, PayloadValidationError  # noqa: E402


def check(results: list[Result]) -> None:
    skipped = [r for r in results if r.skipped]
    failed = [r for r in results if not r.skipped and not r.ok]
    assert not failed, "\n\n".join(r.summary() for r in failed)
    if skipped and len(skipped) == len(results):
        pytest.skip("; ".join(f"{r.scenario}: {r.skipped}" for r in skipped))


SCENARIOS = ["1", "2", "3", "4", "5a", "5b", "5c", "5d", "5e", "6", "7"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_bounded(scenario: str, tmp_path: Path) -> None:
    check(run_scenario(scenario, "quick", tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_full(scenario: str, tmp_path: Path) -> None:
    check(run_scenario(scenario, "full", tmp_path))


# -- regressions found by the scenarios -------------------------------------------------------------
async def test_jobs_due_at_different_future_times_each_start_on_time(tmp_path: Path) -> None:
    """The processor kept one timer per name (the earliest due time) and dropped later ones;
    after it fired and claimed the first job, the others waited for the safety poll (30 s
    by default) instead of starting when due. Found by scenario 5c (retries after a lock)."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", poll_interval=60, safety_poll_interval=60)
    started: dict[int, float] = {}
    all_started = asyncio.Event()

    async def handler(job: Any) -> None:
        started[job.data["n"]] = time.monotonic()
        if len(started) == 3:
            all_started.set()

    m.register("t", handler)
    await m.initialize()
    await m.start()
    try:
        t0 = time.monotonic()
        for n, seconds in enumerate((0.2, 0.5, 0.8)):
            await m.enqueue("t", {"n": n}, run_at=timedelta(seconds=seconds))
        try:
            await asyncio.wait_for(all_started.wait(), 10)
        except TimeoutError:
            pytest.fail(f"only jobs {sorted(started)} started within 10 s (poll 60 s): a later due time was dropped")
        assert all(started[n] - t0 >= s - 0.05 for n, s in enumerate((0.2, 0.5, 0.8))), "a job started early"
    finally:
        await m.close()


async def test_inputs_that_cannot_round_trip_are_refused_with_monque_errors(tmp_path: Path) -> None:
    """Found by scenario 6: lone surrogates reached sqlite3 (UnicodeEncodeError), dict keys
    that are not strings came back as strings, and a non-list status crashed with TypeError."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        with pytest.raises(InvalidJobIdentifierError):
            await m.enqueue("\ud800", {})
        with pytest.raises(InvalidJobIdentifierError):
            await m.enqueue("t", {}, unique_key="k\udfff")
        with pytest.raises(PayloadValidationError):
            await m.enqueue("t", {"s": "\ud800"})
        with pytest.raises(PayloadValidationError):
            await m.enqueue("t", {0: None})
        with pytest.raises(PayloadValidationError):
            await m.enqueue("t", [{"ok": {True: 1}}])
        for status in (0, 1.5, object(), [["pending"]]):
            with pytest.raises(InvalidJobQueryError):
                await m.cancel_jobs(JobSelector(status=status))  # type: ignore[arg-type]
        with pytest.raises(InvalidJobQueryError):
            await m.delete_jobs(JobSelector(name="x\ud800"))
        with pytest.raises(InvalidJobQueryError):
            await m.get_jobs(name="\udc00")
        job = await m.enqueue("t", {"é": ["ü", {"n": 1}]})
        stored = await m.get_job(job.id)
        assert stored is not None and stored.data == {"é": ["ü", {"n": 1}]}
    finally:
        await m.close()
