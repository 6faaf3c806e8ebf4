"""``get_jobs_by_id``: many jobs in one read (a console following a feed without documents).

Not in upstream: ``get_job`` one id at a time is. The contract is ``get_job``'s, per id: an id
that names no job, or cannot be a job id, is simply absent.
"""

from __future__ import annotations

import pytest
from bson import ObjectId

from monque_engine import InvalidJobQueryError, MonqueError


async def test_reads_the_jobs_named_by_id_and_leaves_out_the_rest(monque) -> None:
    m = await monque()
    jobs = await m.enqueue_many([{"name": "many", "data": {"i": i}} for i in range(3)])
    gone = await m.enqueue("many", {"i": "gone"})
    assert await m.delete_job(gone.id)
    asked = [jobs[2].id, jobs[0].id.upper(), ObjectId(jobs[1].id), gone.id, "not-an-id", None, 42, jobs[0].id]
    found = await m.get_jobs_by_id(asked)
    assert set(found) == {job.id for job in jobs}
    for job in jobs:
        assert found[job.id] == await m.get_job(job.id)
    assert await m.get_jobs_by_id([]) == {}
    assert await m.get_jobs_by_id(["nothing", "zz"]) == {}


async def test_more_ids_than_one_statement_takes(monque) -> None:
    """SQLite before 3.32 allows 999 parameters a statement: the store reads in chunks."""
    m = await monque()
    jobs = await m.enqueue_many([{"name": "chunked", "data": {"i": i}} for i in range(1_203)])
    found = await m.get_jobs_by_id(job.id for job in jobs)  # any iterable, a generator too
    assert len(found) == 1_203 and found[jobs[-1].id].data == {"i": 1_202}


async def test_one_id_instead_of_a_collection_is_a_clear_error(monque) -> None:
    """A string is iterable: ``get_jobs_by_id("65f0…")`` would read 24 one-letter ids."""
    m = await monque()
    job = await m.enqueue("single", {})
    with pytest.raises(InvalidJobQueryError, match="collection of ids, not one id") as caught:
        await m.get_jobs_by_id(job.id)
    assert isinstance(caught.value, MonqueError)


async def test_before_initialize_it_raises_as_every_read_does(monque) -> None:
    m = await monque(initialize=False)
    with pytest.raises(MonqueError):
        await m.get_jobs_by_id(["65f000000000000000000001"])
