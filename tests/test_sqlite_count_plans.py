"""Counts by status read an index, never the whole job table (issue 26: ``count_jobs(status=…)``
read all 5M rows, even to count 0 processing jobs, because the status was a bound parameter
and SQLite matches a partial index's WHERE only against literal terms)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from monque_engine import JobStatus, Monque
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.sqlite.queries import filter_where, page_query, selector_where

STATUS_SETS = [(status,) for status in JobStatus] + [
    (JobStatus.FAILED, JobStatus.CANCELLED),
    (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED),
]


@pytest.fixture
async def db(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.db"
    async with Monque(f"sqlite:///{path}", recover_stale_jobs=False) as monque:
        await monque.enqueue("a", {})
    return path


def _plan(db: Path, sql: str, params: list[object]) -> str:
    with sqlite3.connect(db) as conn:
        return " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


@pytest.mark.parametrize("statuses", STATUS_SETS, ids=lambda s: "+".join(x.value for x in s))
@pytest.mark.parametrize("name", [None, "email.send"])
async def test_a_count_by_status_reads_an_index(db: Path, statuses: tuple[JobStatus, ...], name: str | None) -> None:
    where, params = filter_where(StoreListFilter(name=name, statuses=statuses))
    plan = _plan(db, f"SELECT count(*) FROM monque_jobs WHERE {where}", params)
    assert "INDEX" in plan, plan
    where, params = selector_where(StoreSelector(name=name, statuses=statuses))
    plan = _plan(db, f"SELECT count(*) FROM monque_jobs WHERE {where}", params)
    assert "INDEX" in plan, plan


async def test_status_values_are_the_five_words_only(db: Path) -> None:
    """Inlined, never bound: so only a real status may reach the SQL text."""
    with pytest.raises(ValueError):
        filter_where(StoreListFilter(statuses=("pending' OR 1=1 --",)))  # type: ignore[arg-type]


async def test_sorted_pages_keep_walking_their_sort_index(db: Path) -> None:
    """The finished index would answer a page of failed jobs by reading every failed job and
    sorting; the page walks the sort index instead and stops after its rows."""
    from monque_engine.job import JobSort

    failed = StoreListFilter(statuses=(JobStatus.FAILED,))
    sql, params = page_query("id", "monque_jobs", failed, JobSort("created_at", "desc"), "forward", None, 50)
    plan = _plan(db, sql, params)
    assert "monque_jobs_finished" not in plan and "TEMP B-TREE" not in plan, plan


async def test_a_page_of_schedules_reads_the_recurring_index(db: Path) -> None:
    """The Queues view lists every schedule: read from the partial recurring index, not a walk
    of the sort index through every job (1.1 s at 10M jobs, none of them recurring)."""
    from monque_engine.job import JobSort

    sql, params = page_query("id", "monque_jobs", StoreListFilter(recurring=True), JobSort(), "forward", None, 1000)
    plan = _plan(db, sql, params)
    assert "monque_jobs_recurring" in plan, plan
