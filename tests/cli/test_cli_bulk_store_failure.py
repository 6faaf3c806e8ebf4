"""A bulk action the store stops part way (a full disk, a lock held past busy_timeout) says
how far it got. ``delete --yes`` on a disk that filled up part way printed the store's error
alone, exit 3, while 4,000 of its 20,000 jobs were gone (a resource-exhaustion probe):
SQLite commits a bulk action 1,000 jobs a transaction, so what was done stays done."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from monque_engine import ConnectionError, JobListFilter, JobStatus, Monque
from monque_tui.cli.commands import _bounded


async def test_a_bulk_delete_the_store_stops_part_way_says_how_many_were_deleted(tmp_path: Path) -> None:
    monque = Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False)
    await monque.initialize()
    try:
        await monque.enqueue_many([{"name": name, "data": {"n": n}} for name in ("a", "b") for n in range(10)])
        listing = JobListFilter(status=[JobStatus.PENDING])
        count = await monque.count_bulk("delete", listing)
        real_delete = monque.delete_jobs

        async def disk_fills_half_way(listing: JobListFilter, *, as_of: object = None) -> object:
            await real_delete(JobListFilter(name="a"), as_of=as_of)  # the first chunks land
            raise ConnectionError("SQLite database jobs.db: database or disk is full")

        monque.delete_jobs = disk_fills_half_way  # type: ignore[method-assign]
        with pytest.raises(ConnectionError) as failed:
            await _bounded(monque, "delete", listing, count, argparse.Namespace())
        said = str(failed.value)
        assert said.startswith("SQLite database jobs.db: database or disk is full; ")
        assert "at least 10 of the 20 counted job(s) were deleted before it failed: run it again for the rest" in said
        assert await monque.count_jobs(listing) == 10
    finally:
        await monque.close()
