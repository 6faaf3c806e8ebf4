"""A change stream whose ``getMore`` gets no answer within the socket timeout resumes from
its token.

DRIVER LEVEL: a real ``MongoStore``'s change stream (PyMongo's ``AsyncChangeStream``) over
the scripted wire server. The first ``getMore`` is never answered; the URL's tiny
``socketTimeoutMS`` turns that into a network timeout, which the driver treats as a
resumable error: it opens the stream again with ``resumeAfter`` set to the last
``postBatchResumeToken`` (https://www.mongodb.com/docs/manual/changeStreams/#resume-a-change-stream;
the reply shapes: https://www.mongodb.com/docs/manual/reference/command/getMore/). This
proves what the driver and the store send and deliver; a real half-open connection is
not exercised.
"""

from __future__ import annotations

from typing import Any

import pytest
from bson import ObjectId
from test_mongo_evaluator import new_job, oid

from monque_engine.errors import ConnectionError
from monque_engine.store.mongo.intake import new_job_document
from wire import HANG, WireServer, cursor_reply
from wire.store import JOBS, open_store, script_collection

NAMESPACE = f"monque.{JOBS}"
BEFORE_TIMEOUT = {"_data": "8200000001"}  # the postBatchResumeToken of the first, empty batch
AFTER_RESUME = {"_data": "8200000002"}


def _insert_event() -> dict[str, Any]:
    return {
        "_id": AFTER_RESUME,
        "operationType": "insert",
        "ns": {"db": "monque", "coll": JOBS},
        "documentKey": {"_id": ObjectId(oid(1))},
        "fullDocument": new_job_document(new_job(oid(1))),
    }


def _opened(token: dict[str, Any], cursor_id: int = 41) -> dict[str, Any]:
    return cursor_reply(NAMESPACE, [], cursor_id=cursor_id, post_batch_resume_token=token)


def _resume_after(request: Any) -> Any:
    return request["pipeline"][0]["$changeStream"].get("resumeAfter")


async def test_a_get_more_past_the_socket_timeout_resumes_from_the_last_token(wire_server: WireServer) -> None:
    script_collection(wire_server)
    wire_server.reply(
        "aggregate",
        _opened(BEFORE_TIMEOUT),
        cursor_reply(NAMESPACE, [_insert_event()], cursor_id=42, post_batch_resume_token=AFTER_RESUME),
    )
    wire_server.reply("getMore", HANG)
    store = await open_store(wire_server, socketTimeoutMS=200)
    try:
        stream = await store.open_watch()
        event = await anext(stream)
        assert (event.operation, event.job_id, event.token) == ("insert", oid(1), AFTER_RESUME)
        assert stream.resume_token == AFTER_RESUME  # type: ignore[attr-defined]
        await stream.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()
    opened, resumed = wire_server.commands("aggregate")
    assert _resume_after(opened) is None
    assert _resume_after(resumed) == BEFORE_TIMEOUT
    # The cursor whose getMore timed out is not killed (the driver drops its connection; a
    # server reaps such a cursor after its idle timeout); the resumed one is, on aclose().
    assert [r["cursors"] for r in wire_server.commands("killCursors")] == [[42]]


async def test_when_the_resume_also_times_out_the_feed_reports_it_and_reopens_from_the_token(
    wire_server: WireServer,
) -> None:
    """Without ``timeoutMS`` a socket timeout is a dead connection, not idleness (feed.py):
    reported, and the caller reopens from the stream's ``resume_token``, as the
    scheduler's ``ResilientWatch`` does. The driver's resume is a retryable read: it is
    sent twice before the error reaches the store."""
    script_collection(wire_server)
    wire_server.reply("aggregate", _opened(BEFORE_TIMEOUT), HANG, HANG, _opened(AFTER_RESUME, 43))
    wire_server.reply("getMore", HANG)
    store = await open_store(wire_server, socketTimeoutMS=200)
    try:
        stream = await store.open_watch()
        with pytest.raises(ConnectionError) as info:
            await anext(stream)
        assert "read the change stream" in str(info.value) and "timed out" in str(info.value)
        token = stream.resume_token  # type: ignore[attr-defined]
        assert token == BEFORE_TIMEOUT
        again = await store.open_watch(resume_after=token)
        await again.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()
    assert [_resume_after(r) for r in wire_server.commands("aggregate")] == [None] + [BEFORE_TIMEOUT] * 3
