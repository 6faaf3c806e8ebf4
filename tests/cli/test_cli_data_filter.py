"""``--data`` on the commands that take a filter (issue 40 item 5): real subprocesses on a
real SQLite file. ``cancel --data 'data.customer_id missing'`` cancels exactly the jobs
without the key; a term into an array is a one-line usage error (exit 2), jobs untouched."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from cli_helpers import CLI_DIR

from monque_engine import JobStatus, Monque


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    command = [sys.executable, "-m", "monque_tui", *args]
    return subprocess.run(command, cwd=CLI_DIR, env=env, text=True, capture_output=True, timeout=60)


def _seed(url: str) -> tuple[set[str], set[str]]:
    async def run() -> tuple[set[str], set[str]]:
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        try:
            good = {(await monque.enqueue("bill", {"customer_id": n, "amount": 5})).id for n in range(3)}
            bad = {(await monque.enqueue("bill", {"amount": 5.0})).id for _ in range(2)}
            return good, bad
        finally:
            await monque.close()

    return asyncio.run(run())


def _statuses(url: str) -> dict[str, JobStatus]:
    async def run() -> dict[str, JobStatus]:
        monque = Monque(url, recover_stale_jobs=False)
        await monque.initialize()
        try:
            return {job.id: job.status for job in await monque.get_jobs(limit=100)}
        finally:
            await monque.close()

    return asyncio.run(run())


def test_cancel_with_a_payload_term_reaches_exactly_those_jobs(db_url: str) -> None:
    good, bad = _seed(db_url)
    done = cli("cancel", "--data", "data.customer_id missing", "--url", db_url, "--yes")
    assert done.returncode == 0, done.stderr
    assert "where data.customer_id missing" in done.stderr
    statuses = _statuses(db_url)
    assert {i for i, s in statuses.items() if s is JobStatus.CANCELLED} == bad
    assert {statuses[i] for i in good} == {JobStatus.PENDING}


def test_a_term_into_an_array_is_a_usage_error_and_touches_nothing(db_url: str) -> None:
    _seed(db_url)
    before = _statuses(db_url)
    done = cli("delete", "--data", "data.items.0 missing", "--url", db_url, "--yes")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "into an array" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert _statuses(db_url) == before
