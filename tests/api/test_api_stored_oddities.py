"""Rows the engine would never write, written around it into a real SQLite file (by hand,
by another program): the API answers each in JSON, and one odd row never costs a client
the rest of a page. Found by probing the served API (a lone surrogate in a payload made the
adapter's JSON encoding fail after the core's error handling: a plain-text 500 for the job
and for every page that listed it)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from api_support import ApiClient

from monque_engine import Monque
from monque_engine.management import ManagementApi


@pytest.fixture
async def stored(tmp_path: Path) -> AsyncIterator[tuple[ApiClient, Path, list[str]]]:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", recover_stale_jobs=False) as monque:
        ids = [(await monque.enqueue("email", {"n": n})).id for n in range(3)]
        yield ApiClient(ManagementApi(monque)), path, ids


def _set_data(path: Path, job_id: str, text: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE monque_jobs SET data = ? WHERE id = ?", (text, job_id))


async def test_a_lone_surrogate_in_a_payload_is_answered_escaped(stored: tuple[ApiClient, Path, list[str]]) -> None:
    client, path, ids = stored
    _set_data(path, ids[1], '{"x": "\\ud800"}')
    for route in (f"/api/v1/jobs/{ids[1]}", "/api/v1/jobs"):
        answer = await client.call("GET", route)
        assert answer.status == 200
        written = answer.json_bytes()  # what either adapter sends
        assert json.loads(written) == answer.body and b"\\ud800" in written
    page = await client.ok("GET", "/api/v1/jobs")
    assert len(page["jobs"]) == 3


async def test_an_unreadable_row_is_named_not_an_internal_error(stored: tuple[ApiClient, Path, list[str]]) -> None:
    client, path, ids = stored
    _set_data(path, ids[0], "not json at all")
    answer = await client.call("GET", f"/api/v1/jobs/{ids[0]}")
    assert answer.status == 500 and f"Stored row {ids[0]} is not a readable Monque job" in answer.body["error"]
    page = await client.ok("GET", "/api/v1/jobs")  # the listing skips it, as every listing does
    assert sorted(job["id"] for job in page["jobs"]) == sorted(ids[1:])


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("fail_count", -1, "failCount"),
        ("fail_count", 2**53 + 1, "failCount"),
        ("created_at", -(10**14), "out of range"),  # the year -1199
        ("next_run_at", 10**17, "out of range"),  # past the year 9999
    ],
)
async def test_a_value_the_contract_cannot_carry_costs_only_its_own_job(
    stored: tuple[ApiClient, Path, list[str]], column: str, value: int, says: str
) -> None:
    client, path, ids = stored
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE monque_jobs SET {column} = ? WHERE id = ?", (value, ids[1]))
    page = await client.ok("GET", "/api/v1/jobs")  # the page: was a 500
    assert sorted(job["id"] for job in page["jobs"]) == sorted([ids[0], ids[2]])
    answer = await client.call("GET", f"/api/v1/jobs/{ids[1]}")
    assert answer.status == 500 and f"Stored job {ids[1]} holds a value" in answer.body["error"], answer.body
    assert says in answer.body["error"]
    assert (await client.ok("DELETE", f"/api/v1/jobs/{ids[1]}")) == {"deleted": True}  # the fix it names works


async def test_a_store_locked_by_another_process_says_so(tmp_path: Path) -> None:
    """Another connection holds the file's write lock past busy_timeout (a long migration, a
    backup tool): the answer is the store's own line (what the command line prints), not
    "internal server error", and nothing is changed."""
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}?busy_timeout=0.2", recover_stale_jobs=False) as monque:
        await monque.enqueue("email", {})
        client = ApiClient(ManagementApi(monque))
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            answer = await client.call("POST", "/api/v1/jobs/actions/cancel", body={"name": "email"})
        finally:
            holder.close()
        assert answer.status == 500 and answer.body["error"].startswith("The store did not answer: "), answer.body
        assert "locked" in answer.body["error"] and "\n" not in answer.body["error"]
        assert (await client.ok("GET", "/api/v1/jobs/stats"))["pending"] == 1


@pytest.mark.parametrize(
    ("route", "column", "value", "says"),
    [
        ("run", "locked_at", 10**17, "out of range"),  # past the year 9999
        ("run", "last_heartbeat", -(10**14), "out of range"),
        (
            "attempts",
            "attempts",
            '[{"attempt": 1, "outcome": "failed", "endedAt": 100000000000000000}]',
            "out of range",
        ),
        ("attempts", "attempts", '[{"attempt": -1, "outcome": "failed", "endedAt": 1000}]', "attempt"),
    ],
)
async def test_a_jobs_run_and_attempts_name_a_value_the_contract_cannot_carry(
    stored: tuple[ApiClient, Path, list[str]], route: str, column: str, value: object, says: str
) -> None:
    """The job's own routes of ours answer an odd row as the job routes do: a 500 naming the
    job and the field (it was the generic "internal server error" and a traceback)."""
    client, path, ids = stored
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE monque_jobs SET {column} = ? WHERE id = ?", (value, ids[1]))
    answer = await client.call("GET", f"/api/x/v1/jobs/{ids[1]}/{route}")
    assert answer.status == 500 and f"Stored job {ids[1]} holds a value" in answer.body["error"], answer.body
    assert says in answer.body["error"]
    assert (await client.call("GET", f"/api/x/v1/jobs/{ids[0]}/{route}")).status == 200  # the others still answer
