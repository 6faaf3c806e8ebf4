"""Payload fidelity: what goes in comes out, the same way on every read, and an export of it
is strict JSON (found by acceptance probe round 5).

The SQLite store is exercised for real; the MongoDB side through its document mapping only
(``new_job_document`` / ``Job.to_document`` encoded and decoded by PyMongo's ``bson``, then
``Job.from_document``), since no MongoDB server exists here.

Found: ``enqueue`` (and ``enqueue_many``, ``schedule``) returned a job holding the caller's
object, so a tuple came back a tuple (an ``OrderedDict``, an ``IntEnum`` as themselves) while
``get_job``, listings and the handler got the list, dict or int that was stored. And an
export wrote a NaN or infinity that a MongoDB producer stored as ``NaN``, which is not JSON.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections import OrderedDict
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Any

import bson
import pytest

from monque_engine import Job, Monque, PayloadValidationError
from monque_engine.export import export_document, export_jobs
from monque_engine.job import NewJob
from monque_engine.store.mongo.intake import new_job_document
from tests.conftest import SHORT_INTERVALS


class Level(IntEnum):
    HIGH = 3


class Colour(StrEnum):
    RED = "red"


#: (given, what every reader gets back)
NOT_PLAIN: list[tuple[Any, Any]] = [
    ({"pair": (1, 2)}, {"pair": [1, 2]}),
    ((1, (2, 3)), [1, [2, 3]]),
    (OrderedDict(b=1, a=2), {"b": 1, "a": 2}),
    ({"level": Level.HIGH, "colour": Colour.RED}, {"level": 3, "colour": "red"}),
    ({"nested": [OrderedDict(x=(True, None))]}, {"nested": [{"x": [True, None]}]}),
    (Level.HIGH, 3),
    ({Colour.RED: 1}, {"red": 1}),  # a str subclass as a key is a str key
]


def _exact(value: Any) -> str:
    """Value and types, all the way down (``==`` says 3 == Level.HIGH and (1,) != [1] only by type)."""
    if isinstance(value, dict):
        return f"{type(value).__name__}{{" + ",".join(f"{_exact(k)}:{_exact(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__}[" + ",".join(_exact(v) for v in value) + "]"
    return f"{type(value).__name__}({value!r})"


async def _opened(tmp_path: Path) -> Monque:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db", **SHORT_INTERVALS)
    await m.initialize()
    return m


@pytest.mark.parametrize(("given", "stored"), NOT_PLAIN, ids=[repr(g)[:30] for g, _ in NOT_PLAIN])
async def test_the_job_enqueue_returns_holds_what_every_later_read_gets(
    tmp_path: Path, given: Any, stored: Any
) -> None:
    m = await _opened(tmp_path)
    handled: list[Any] = []
    done = asyncio.Event()

    async def handler(job: Job) -> None:
        handled.append(job.data)
        if len(handled) == 3:
            done.set()

    m.register("t", handler)
    try:
        returned = [
            (await m.enqueue("t", given)).data,
            (await m.enqueue_many([{"name": "t", "data": given}]))[0].data,
            (await m.schedule("0 0 1 1 *", "s", given, unique_key="k")).data,
            (await m.enqueue_many([{"name": "t", "data": given, "unique_key": "u"}]))[0].data,
        ]
        read = [job.data for job in await m.get_jobs()]
        await m.start()
        await asyncio.wait_for(done.wait(), 10)
    finally:
        await m.close()
    expected = _exact(stored)
    assert [_exact(data) for data in returned] == [expected] * 4
    assert [_exact(data) for data in read] == [expected] * 4
    assert [_exact(data) for data in handled] == [expected] * 3


async def test_a_plain_payload_is_handed_back_equal_but_never_shared(tmp_path: Path) -> None:
    """Dicts, lists and exact scalars come back equal, and never as the caller's own objects:
    handed back as given (to pay nothing), a change the caller made after the call showed on
    the returned job though it was never stored (a data probe; test_enqueue_returns_a_copy.py)."""
    m = await _opened(tmp_path)
    try:
        data = {"to": "ada@example.com", "items": [1, 2.5, None, True, {"k": "v"}]}
        for returned in (
            (await m.enqueue("t", data)).data,
            (await m.enqueue_many([{"name": "t", "data": data}]))[0].data,
        ):
            assert _exact(returned) == _exact(data) and returned is not data and returned["items"] is not data["items"]
    finally:
        await m.close()


#: Values JSON and BSON both hold: each must read back identical from SQLite and through the
#: MongoDB document mapping.
FAITHFUL: list[Any] = [
    {"int53": 2**53 + 1, "max": 2**63 - 1, "min": -(2**63)},
    {"negative_zero": -0.0, "tiny": 5e-324, "big": 1e308, "float_one": 1.0, "sum": 0.1 + 0.2},
    {"bool": True, "one": 1, "zero": 0, "false": False},
    {"text": "😀 \u2028 \x00 é", "": "empty key", "$set": 1, "a.b": {"$in": [1]}},
    [[[]], {}, [{}], None],
    "a plain string",
]


@pytest.mark.parametrize("data", FAITHFUL, ids=[repr(d)[:30] for d in FAITHFUL])
async def test_values_both_stores_hold_read_back_identical_from_each(tmp_path: Path, data: Any) -> None:
    m = await _opened(tmp_path)
    try:
        job = await m.enqueue("t", data)
        from_sqlite = await m.get_job(job.id)
    finally:
        await m.close()
    assert from_sqlite is not None
    assert _exact(from_sqlite.data) == _exact(data)
    # MongoDB: the insert document and a stored document, through BSON and back.
    new = NewJob(job.id, "t", data, json.dumps(data), job.next_run_at_ms, job.created_at_ms)
    for document in (new_job_document(new), from_sqlite.to_document()):
        from_mongo = Job.from_document(bson.decode(bson.encode(document)))
        # PyMongo decodes a BSON int64 as bson.Int64, an int subclass (equal, hashing and
        # serialising as the int): the one type that differs, by PyMongo's design.
        assert _exact(from_mongo.data).replace("Int64(", "int(") == _exact(data)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
async def test_nan_and_infinity_are_refused_at_enqueue_on_every_path(tmp_path: Path, bad: float) -> None:
    m = await _opened(tmp_path)
    try:
        for call in (
            m.enqueue("t", {"x": bad}),
            m.enqueue_many([{"name": "t", "data": [bad]}]),
            m.schedule("@daily", "t", bad),
        ):
            with pytest.raises(PayloadValidationError, match="NaN/Infinity"):
                await call
        assert await m.get_jobs() == []
    finally:
        await m.close()


NON_FINITE_DOCUMENT: dict[str, Any] = {
    "_id": bson.ObjectId(),
    "name": "from-node",
    "data": {"ratio": float("nan"), "bounds": [float("-inf"), 1.5, float("inf")]},
    "status": "pending",
    "nextRunAt": 0,
    "createdAt": 0,
    "updatedAt": 0,
}


def test_an_export_of_nan_a_mongodb_producer_stored_is_strict_json() -> None:
    job = Job.from_document(bson.decode(bson.encode(NON_FINITE_DOCUMENT)))
    out = io.StringIO()
    from monque_engine.export import _Writer

    _Writer(out, "jsonl").write(job)
    line = json.loads(out.getvalue(), parse_constant=_refuse)
    assert line["data"] == {
        "ratio": {"$numberDouble": "NaN"},
        "bounds": [{"$numberDouble": "-Infinity"}, 1.5, {"$numberDouble": "Infinity"}],
    }
    assert export_document(job)["data"] is job.data  # the document itself is untouched
    out = io.StringIO()
    _Writer(out, "csv").write(job)
    row = next(csv.DictReader(io.StringIO(out.getvalue())))
    assert json.loads(row["data"], parse_constant=_refuse)["ratio"] == {"$numberDouble": "NaN"}


async def test_an_export_of_a_sqlite_row_edited_to_hold_nan_is_strict_json(tmp_path: Path) -> None:
    m = await _opened(tmp_path)
    try:
        job = await m.enqueue("t", {"x": 1})
        store: Any = m.store
        await store.execute_write(
            lambda conn: conn.execute("UPDATE monque_jobs SET data = ? WHERE id = ?", ('{"x":NaN}', job.id))
        )
        out = io.StringIO()
        assert await export_jobs(m, out) == 1
    finally:
        await m.close()
    assert json.loads(out.getvalue(), parse_constant=_refuse)["data"] == {"x": {"$numberDouble": "NaN"}}


def _refuse(constant: str) -> Any:
    raise AssertionError(f"export wrote {constant}, which is not JSON")
