"""An id is found by 4 or more of the 8 characters consoles show (issue 28).

Seven of those eight matched nothing: the store matched only an id's start or its end.
Real SQLite files; the MongoDB query document is checked with mongomock as an evaluator
(no server here).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from monque_engine import JobListFilter, Monque
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo import documents as q
from monque_tui.console.formatting import short_id
from monque_tui.console.query import JobQuery


async def _store(url: str) -> list[str]:
    m = Monque(url)
    await m.initialize()
    try:
        return [(await m.enqueue("s", {"i": i})).id for i in range(6)]
    finally:
        await m.close()


@pytest.mark.parametrize("cut", [slice(0, 7), slice(0, 4), slice(2, 8), slice(1, 6)], ids=str)
async def test_the_store_finds_part_of_the_shown_id(tmp_path: Path, cut: slice) -> None:
    store_url = f"sqlite:///{tmp_path / 'ids.db'}"
    ids = await _store(store_url)
    target = ids[3]
    fragment = short_id(target)[cut]
    m = Monque(store_url)
    await m.initialize()
    try:
        page = await m.get_jobs_with_cursor(filter=JobListFilter(search=fragment), limit=100)
        found = {job.id for job in page.jobs}
        assert target in found
        assert all(fragment in job_id[-8:] or job_id.startswith(fragment) for job_id in found)
        assert all(JobQuery(search=fragment).matches(job) for job in page.jobs)  # the live predicate agrees
    finally:
        await m.close()


def test_the_mongo_document_finds_part_of_the_shown_id() -> None:
    from test_mongo_documents import _ids, _job
    from test_mongo_evaluator import evaluator_collection, oid

    c = evaluator_collection()
    c.insert_many([_job(n=0x12AB34CD), _job(n=0x56EF78A9), _job(n=0x9ABC0DEF)])
    target = oid(0x56EF78A9)
    for fragment in ("56ef78a", "56ef", "ef78a9", "f78a"):
        assert _ids(c.find(q.list_filter(StoreListFilter(search=fragment)))) == [target], fragment
