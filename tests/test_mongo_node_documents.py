"""Documents written by Node Monque decode into Job and encode back unchanged.

The fixture is relaxed Extended JSON (as Node's EJSON.stringify / mongoexport print it)
covering every status, optional fields present and absent, a recurring and a unique-keyed
job. "Unchanged" means the same fields, BSON types and values (compared as documents and
as BSON bytes of each field); field *order* can differ for claimed jobs because our encoder
has one fixed order, which MongoDB queries, indexes and Node Monque do not depend on.
"""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import json_util

from monque_engine.job import ALL_STATUSES, Job

FIXTURE = Path(__file__).parent / "fixtures" / "node_monque_documents.json"
OPTIONS = json_util.RELAXED_JSON_OPTIONS.with_options(tz_aware=True, tzinfo=UTC)


def _documents() -> list[dict[str, Any]]:
    raw = json.loads(FIXTURE.read_text())["documents"]
    return [json_util.loads(json.dumps(doc), json_options=OPTIONS) for doc in raw]


def test_fixture_covers_every_status_and_optional_field() -> None:
    docs = _documents()
    assert {d["status"] for d in docs} == {s.value for s in ALL_STATUSES}
    optional = {
        "lockedAt",
        "claimedBy",
        "lastHeartbeat",
        "heartbeatInterval",
        "failReason",
        "repeatInterval",
        "uniqueKey",
    }
    assert optional <= set().union(*(set(d) for d in docs))
    assert any(not (optional & set(d)) for d in docs)


@pytest.mark.parametrize("doc", _documents(), ids=lambda d: f"{d['status']}-{d['name']}")
def test_node_document_round_trips_through_job(doc: dict[str, Any]) -> None:
    job = Job.from_document(doc)
    back = job.to_document()
    assert back == doc
    assert set(back) == set(doc)
    for key in doc:  # same BSON type and bytes per field (int32 stays int32, dates stay dates)
        assert bson.encode({key: back[key]}) == bson.encode({key: doc[key]}), key
    assert json_util.dumps(back, json_options=OPTIONS, sort_keys=True) == json_util.dumps(
        doc, json_options=OPTIONS, sort_keys=True
    )


def test_unclaimed_document_keeps_field_order_byte_for_byte() -> None:
    pending = _documents()[0]
    assert bson.encode(Job.from_document(pending).to_document()) == bson.encode(pending)
