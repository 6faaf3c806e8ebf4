"""Export (issue 13): every matching job, streamed in keyset pages, as JSON Lines or CSV."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter
from monque_engine.export import FIELDS, export_jobs

ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


async def test_jsonl_export_streams_every_matching_job_in_pages_with_progress(monque):
    m = await monque()
    wanted = [await m.enqueue("email", {"n": n, "to": "ä@example.com"}) for n in range(7)]
    await m.enqueue("sms")
    cancelled = await m.enqueue("email")
    await m.cancel_job(cancelled.id)
    pages: list[int] = []
    original = m.get_jobs_with_cursor

    async def spy(*args: Any, **kwargs: Any) -> Any:
        page = await original(*args, **kwargs)
        pages.append(len(page.jobs))
        return page

    m.get_jobs_with_cursor = spy  # type: ignore[method-assign]
    calls: list[tuple[int, int]] = []
    out = io.StringIO()
    written = await export_jobs(
        m,
        out,
        JobListFilter(name="email", status="pending"),
        "jsonl",
        progress=lambda done, total: calls.append((done, total)),
        page_size=3,
    )
    assert written == 7
    assert pages == [3, 3, 1]  # one page in memory at a time
    assert calls == [(0, 7), (3, 7), (6, 7), (7, 7)]
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [d["_id"] for d in docs] == sorted(job.id for job in wanted)
    first = docs[0]
    assert re.fullmatch(r"[0-9a-f]{24}", first["_id"])
    assert list(first)[:7] == ["_id", "name", "status", "nextRunAt", "createdAt", "updatedAt", "failCount"]
    assert ISO.fullmatch(first["nextRunAt"]) and ISO.fullmatch(first["createdAt"])
    assert first["data"]["to"] == "ä@example.com" and first["status"] == "pending"
    assert "claimedBy" not in first  # fields a job does not have are left out, as in its document


async def test_csv_export_has_fixed_columns_and_data_as_json(monque):
    m = await monque()
    job = await m.enqueue("email", {"n": 1}, unique_key="k-1", run_at=datetime(2030, 1, 2, 3, 4, 5, 678000, UTC))
    out = io.StringIO()
    assert await export_jobs(m, out, None, "csv") == 1
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(rows[0]) == FIELDS
    row = rows[0]
    assert row["_id"] == job.id and row["uniqueKey"] == "k-1" and row["claimedBy"] == ""
    assert row["nextRunAt"] == "2030-01-02T03:04:05.678Z"
    assert json.loads(row["data"]) == {"n": 1}


async def test_an_empty_view_and_bad_arguments(monque):
    m = await monque()
    await m.enqueue("email")
    out = io.StringIO()
    assert await export_jobs(m, out, JobListFilter(name="nothing"), "csv") == 0
    assert out.getvalue().splitlines() == [",".join(FIELDS)]
    out = io.StringIO()
    with pytest.raises(InvalidJobQueryError, match="Unknown export format 'xml'; use one of jsonl, csv"):
        await export_jobs(m, out, None, "xml")
    with pytest.raises(InvalidJobQueryError, match="timezone-aware"):
        await export_jobs(m, out, JobListFilter(created_at_from=datetime(2026, 1, 1)), "jsonl")
    assert out.getvalue() == ""  # nothing written before the arguments were checked
    assert await export_jobs(m, io.StringIO(), JobListFilter(next_run_at_to=datetime.now(UTC) + timedelta(1))) == 1


def test_the_documented_csv_columns_are_the_written_ones() -> None:
    """docs/operations.md listed the CSV's columns up to ``attempts``; five more were written
    after them (a probe): the list is read from the page and held to ``FIELDS``."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "operations.md").read_text()
    listed = page.split("CSV has fixed columns:", 1)[1].split("CSV cells", 1)[0]
    assert tuple(re.findall(r"`(\w+)`", listed)) == FIELDS
