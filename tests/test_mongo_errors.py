"""Driver errors become engine errors: cause kept, server named, password never shown."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pymongo.errors import AutoReconnect, OperationFailure
from test_mongo_evaluator import evaluator_store
from test_mongo_watch import DriverStream, ScriptedCursor

from monque_engine import Monque
from monque_engine.errors import (
    AggregationTimeoutError,
    ChangeFeedHistoryLostError,
    ConnectionError,
    InvalidCursorError,
)
from monque_engine.store import StoreOpenOptions, open_store
from monque_engine.store.mongo import InvalidMongoUrlError, MongoStore, parse_mongo_url
from monque_engine.store.mongo.config import mask_password
from monque_engine.store.mongo.errors import ErrorTranslator

URL = "mongodb://user:s3cret@127.0.0.1:1/db?serverSelectionTimeoutMS=300"


async def test_unreachable_server_fails_open_quickly_naming_host_not_password() -> None:
    store = open_store(URL)
    assert "s3cret" not in store.display_url
    started = time.monotonic()
    with pytest.raises(ConnectionError) as info:
        await store.open(StoreOpenOptions())
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert "127.0.0.1" in message and "s3cret" not in message and "300 ms" in message
    assert info.value.__cause__ is not None
    await store.close()


async def test_unreachable_server_fails_monque_initialize_without_password() -> None:
    m = Monque(URL)
    with pytest.raises(ConnectionError) as info:
        await m.initialize()
    assert "127.0.0.1" in str(info.value) and "s3cret" not in str(info.value)
    assert "s3cret" not in m.display_url


async def test_server_selection_timeout_kwarg_overrides_default() -> None:
    store = MongoStore.from_url("mongodb://user:s3cret@127.0.0.1:1/db", server_selection_timeout_ms=200)
    with pytest.raises(ConnectionError, match="within 200 ms") as info:
        await store.open(StoreOpenOptions())
    assert "s3cret" not in str(info.value)


async def test_invalid_driver_option_is_reported_masked() -> None:
    store = MongoStore.from_url("mongodb://user:s3cret@127.0.0.1:1/db", maxPoolSize="lots")
    with pytest.raises(ConnectionError, match="Invalid MongoDB URL or option") as info:
        await store.open(StoreOpenOptions())
    assert "s3cret" not in str(info.value) and "maxpoolsize" in str(info.value).lower()
    assert info.value.__cause__ is not None


def test_url_parsing_database_and_timeout() -> None:
    s = parse_mongo_url("mongodb+srv://u:p%40ss@cluster0.example.net/jobsdb?retryWrites=true")
    assert (s.hosts, s.database, s.server_selection_timeout_ms) == ("cluster0.example.net", "jobsdb", 5_000)
    assert "serverSelectionTimeoutMS" not in s.driver_kwargs()  # operations keep the driver's default
    assert (
        "serverSelectionTimeoutMS" not in parse_mongo_url("mongodb://h/?serverSelectionTimeoutMS=900").driver_kwargs()
    )
    assert parse_mongo_url("mongodb://h/a", database="b").database == "b"
    assert parse_mongo_url("mongodb://h").database == "monque"
    with pytest.raises(InvalidMongoUrlError) as info:
        parse_mongo_url("mongodb://user:s3cret@/db")
    assert "s3cret" not in str(info.value)


def test_mask_password_raw_and_percent_decoded() -> None:
    url = "mongodb://user:p%40ss%2Fw0rd@h/db"
    assert mask_password("auth failed for p@ss/w0rd and p%40ss%2Fw0rd", url) == "auth failed for *** and ***"


def _translator() -> ErrorTranslator:
    return ErrorTranslator("MongoDB h1:27017/db", lambda text: mask_password(text, "mongodb://u:s3cret@h1/db"))


def test_translator_codes() -> None:
    t = _translator()
    standalone = OperationFailure("The $changeStream stage is only supported on replica sets", code=40573)
    error = t.translate("open the change stream", standalone)
    assert isinstance(error, ConnectionError) and "replica set" in str(error) and "h1:27017" in str(error)
    lost = t.translate("read the change stream", OperationFailure("resume point no longer in oplog", code=286))
    assert isinstance(lost, ChangeFeedHistoryLostError)
    assert "older than the oldest change" in str(lost)  # what the scheduler's feed loop keys on
    assert isinstance(t.translate("compute", OperationFailure("time limit", code=50)), AggregationTimeoutError)
    other = t.translate("x", AutoReconnect("lost mongodb://u:s3cret@h1"))
    assert isinstance(other, ConnectionError) and "s3cret" not in str(other)


async def test_open_watch_standalone_raises_at_open() -> None:
    store, adapter = evaluator_store()

    async def watch(*args: Any, **kwargs: Any) -> Any:
        assert kwargs["full_document"] == "updateLookup"
        raise OperationFailure("The $changeStream stage is only supported on replica sets", code=40573)

    adapter.watch = watch  # type: ignore[attr-defined]
    with pytest.raises(ConnectionError, match="standalone"):
        await store.open_watch()
    with pytest.raises(InvalidCursorError):
        await store.open_watch(12)


async def test_watch_iteration_error_arrives_as_connection_error_after_events() -> None:
    """PyMongo's real AsyncChangeStream over a scripted cursor (a fake: see test_mongo_watch)."""
    store, adapter = evaluator_store()
    insert = {
        "_id": {"_data": "01"},
        "operationType": "insert",
        "documentKey": {"_id": 1},
        "fullDocument": {"_id": 1, "name": "email", "status": "pending"},
    }
    lost = AutoReconnect("mongodb://user:s3cret@evaluator lost")
    stream = DriverStream(ScriptedCursor(("batch", [insert], False), ("raise", lost)), ScriptedCursor(("raise", lost)))

    async def watch(*args: Any, **kwargs: Any) -> Any:
        assert kwargs["resume_after"] == {"_data": "00"}
        return stream

    adapter.watch = watch  # type: ignore[attr-defined]
    events = await store.open_watch({"_data": "00"}, full_document=False)
    first = await anext(events)
    assert first.token == {"_data": "01"} and first.name == "email"
    with pytest.raises(ConnectionError) as info:
        await anext(events)
    assert isinstance(info.value.__cause__, AutoReconnect) and "s3cret" not in str(info.value)
    assert stream._closed  # the store closed it on the way out


async def test_watch_ends_quietly_when_store_closes() -> None:
    store, adapter = evaluator_store()
    stream = DriverStream(ScriptedCursor(("raise", AutoReconnect("cursor killed"))))

    async def watch(*args: Any, **kwargs: Any) -> Any:
        return stream

    adapter.watch = watch  # type: ignore[attr-defined]
    events = await store.open_watch()
    await store.close()
    assert [e async for e in events] == []
    assert stream._closed


@pytest.mark.parametrize(
    ("driver_error", "passes"),
    [
        (AutoReconnect("connection reset"), True),
        (OperationFailure("not primary", code=10107), True),
        (OperationFailure("interrupted at shutdown", code=11600), True),
        (OperationFailure("write failed", code=112, details={"errorLabels": ["RetryableWriteError"]}), True),
        (OperationFailure("Document failed validation", code=121), False),
        (OperationFailure("not authorized on app to execute command", code=13), False),
        (OperationFailure("The field 'attempts' must be an array", code=2), False),
    ],
)
def test_only_what_may_pass_later_is_store_unavailable(driver_error: Exception, passes: bool) -> None:
    """A completion is written again only while the store raises ``StoreUnavailableError``
    (ADR 0026): an election or a dropped connection may pass; a validator's refusal, a missing
    privilege or a malformed document never will, and were held for ever (a review)."""
    from monque_engine.errors import ConnectionError, StoreUnavailableError
    from monque_engine.store.mongo.errors import ErrorTranslator

    translated = ErrorTranslator("MongoDB app@h", lambda text: text).translate("complete a job", driver_error)
    assert isinstance(translated, ConnectionError)
    assert isinstance(translated, StoreUnavailableError) is passes, translated
