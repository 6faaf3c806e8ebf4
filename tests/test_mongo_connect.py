"""Connecting: which timeouts bound what, and the minimum server version. FAKES.

No MongoDB server runs here. The timeout tests build PyMongo's real ``AsyncMongoClient``
(it connects lazily) and let it fail against a closed port; the version tests feed
``hello`` / ``buildInfo`` replies recorded from real servers to the store's check.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

from monque_engine.errors import ConnectionError, UnsupportedServerVersionError
from monque_engine.store.base import StoreOpenOptions
from monque_engine.store.mongo import MongoStore, config, parse_mongo_url
from monque_engine.store.mongo.server import inspect_server, parse_version

CODEC = ("datetime_conversion", "unicode_decode_error_handler")


def _timeouts(url: str, **options: Any) -> dict[str, Any]:
    return {k: v for k, v in parse_mongo_url(url, **options).driver_kwargs().items() if k not in CODEC}


def test_driver_keeps_its_server_selection_default_and_gets_a_socket_timeout() -> None:
    """Issue 11 items 3 and 6: only the first ping is bounded by 5 s; operations keep the
    driver's serverSelectionTimeoutMS (30 s: an election takes 10–12 s) and get a socket
    timeout, unless the URL or the caller chose their own."""
    assert _timeouts("mongodb://h/db") == {"socketTimeoutMS": 60_000}
    assert _timeouts("mongodb://h/db?socketTimeoutMS=5000") == {}
    assert _timeouts("mongodb://h/db?timeoutMS=5000") == {}  # CSOT replaces it
    assert _timeouts("mongodb://h/db", socketTimeoutMS=1_000) == {"socketTimeoutMS": 1_000}
    assert _timeouts("mongodb://h/db", server_selection_timeout_ms=800) == {
        "serverSelectionTimeoutMS": 800,
        "socketTimeoutMS": 60_000,
    }


async def test_client_decodes_foreign_dates_and_bad_utf8_instead_of_failing_a_reply() -> None:
    """Issue 11 item 5: a date outside Python's range (Node can write year 10000) would
    make PyMongo fail the whole reply with InvalidBSON; DATETIME_AUTO returns DatetimeMS,
    which Job.from_document reads as epoch ms. The caller's own choice wins."""
    from bson import ObjectId, decode, encode
    from bson.codec_options import CodecOptions, DatetimeConversion
    from bson.datetime_ms import DatetimeMS

    from monque_engine.job import Job

    store = MongoStore.from_url("mongodb://h:1/db")
    client = store._new_client()
    try:
        assert client.codec_options.datetime_conversion is DatetimeConversion.DATETIME_AUTO
        assert client.codec_options.unicode_decode_error_handler == "replace"
        far = 253_402_300_800_000 + 5  # 10000-01-01T00:00:00.005Z
        raw = encode({"_id": ObjectId(), "name": "n", "status": "pending", "nextRunAt": DatetimeMS(far)})
        doc = decode(raw, CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO))
        assert Job.from_document(doc).next_run_at_ms == far
    finally:
        await store.close()
    kwargs = parse_mongo_url("mongodb://h/db", datetime_conversion=DatetimeConversion.DATETIME).driver_kwargs()
    assert kwargs["datetime_conversion"] is DatetimeConversion.DATETIME


async def test_the_real_client_gets_driver_defaults_for_operations() -> None:
    store = MongoStore.from_url("mongodb://user:s3cret@127.0.0.1:1/db")
    client = store._new_client()
    try:
        assert client.options.server_selection_timeout == 30  # PyMongo's default, as upstream
        assert client.options.pool_options.socket_timeout == 60
    finally:
        await store.close()


async def test_only_the_first_ping_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ping's bound comes from pymongo.timeout around it, not from the client: the
    client keeps 30 s for server selection, yet open() gives up at the ping's bound."""
    monkeypatch.setattr(config, "DEFAULT_SERVER_SELECTION_TIMEOUT_MS", 300)
    store = MongoStore.from_url("mongodb://user:s3cret@127.0.0.1:1/db")
    async with asyncio.timeout(20):  # a hang guard only: unbounded, this would take 30 s
        with pytest.raises(ConnectionError, match="within 300 ms") as info:
            await store.open(StoreOpenOptions())
    cause = info.value.__cause__
    assert isinstance(cause, ServerSelectionTimeoutError) and "Timeout: 30" not in str(cause)
    assert "s3cret" not in str(info.value)
    await store.close()


def _command(replies: dict[str, Any]) -> Any:
    async def command(name: str) -> Any:
        reply = replies[name]
        if isinstance(reply, BaseException):
            raise reply
        return reply

    return command


REPLICA_HELLO = {"isWritablePrimary": True, "setName": "rs0", "maxWireVersion": 21, "ok": 1.0}
STANDALONE_HELLO = {"isWritablePrimary": True, "maxWireVersion": 9, "ok": 1.0}


@pytest.mark.parametrize(
    ("build", "ok"),
    [
        ({"version": "4.2.24", "versionArray": [4, 2, 24, 0]}, False),
        ({"version": "4.4.1", "versionArray": [4, 4, 1, 0]}, False),
        ({"version": "4.4.2", "versionArray": [4, 4, 2, 0]}, True),
        ({"version": "7.0.5-rc1"}, True),
        ({"version": "3.6.23"}, False),
    ],
)
async def test_minimum_server_version_is_4_4_2(build: dict[str, Any], ok: bool) -> None:
    """Issue 11 item 15: one clear error below 4.4.2 (``$rand``, ``hello``)."""
    command = _command({"hello": REPLICA_HELLO, "buildInfo": {**build, "ok": 1.0}})
    if ok:
        info = await inspect_server(command, "MongoDB at h:27017")
        assert info.supports_transactions and info.version == build["version"]
        return
    with pytest.raises(UnsupportedServerVersionError) as error:
        await inspect_server(command, "MongoDB at h:27017")
    message = str(error.value)
    assert isinstance(error.value, ConnectionError) and "\n" not in message
    assert f"runs MongoDB {build['version']}" in message and "4.4.2 or newer" in message and "upgrade" in message


async def test_a_server_without_hello_is_named_by_its_version() -> None:
    """MongoDB 4.2 answers hello with CommandNotFound (59): the check still says which
    version it found and what is needed, instead of a bare "no such command"."""
    missing = OperationFailure("no such command: 'hello'", code=59)
    command = _command(
        {
            "hello": missing,
            "isMaster": {"ismaster": True, "setName": "rs0", "maxWireVersion": 8},
            "buildInfo": {"version": "4.2.24", "versionArray": [4, 2, 24, 0]},
        }
    )
    with pytest.raises(UnsupportedServerVersionError, match=r"runs MongoDB 4\.2\.24; Monque needs 4\.4\.2 or newer"):
        await inspect_server(command, "MongoDB at h:27017")


async def test_version_check_falls_back_to_the_wire_version() -> None:
    refused = OperationFailure("not authorized on admin to execute command { buildInfo: 1 }", code=13)
    info = await inspect_server(_command({"hello": STANDALONE_HELLO, "buildInfo": refused}), "MongoDB at h")
    assert not info.supports_transactions
    old = {**STANDALONE_HELLO, "maxWireVersion": 8}
    with pytest.raises(UnsupportedServerVersionError, match="wire version 8"):
        await inspect_server(_command({"hello": old, "buildInfo": refused}), "MongoDB at h")
    assert parse_version({"version": "garbage"}) is None


async def test_open_refuses_an_old_server_before_creating_indexes(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MongoStore.from_url("mongodb://user:s3cret@h:27017/db")
    created: list[Any] = []

    class Admin:
        command = staticmethod(_command({"hello": REPLICA_HELLO, "buildInfo": {"version": "4.2.1", "ok": 1.0}}))

    class Collection:
        class database:
            class client:
                admin = Admin

        async def create_indexes(self, models: Any) -> None:
            created.append(models)

    async def connect(options: Any) -> Any:
        return Collection()

    monkeypatch.setattr(store, "_connect", connect)
    with pytest.raises(UnsupportedServerVersionError, match=r"runs MongoDB 4\.2\.1"):
        await store.open(StoreOpenOptions())
    assert created == [] and store._collection is None


async def test_bulk_writes_get_a_long_deadline_and_other_operations_none() -> None:
    """Issue 11 items 3 and 6: ordinary operations run with no deadline of ours (the
    driver's defaults plus the socket timeout); writes that may touch the whole collection
    run under pymongo.timeout(600), which replaces the 60 s socket timeout for them."""
    from test_mongo_evaluator import evaluator_store, new_job, oid

    from monque_engine.job import JobStatus
    from monque_engine.store.base import StoreSelector
    from monque_engine.store.mongo.plumbing import LONG_OPERATION_TIMEOUT_S

    store, adapter = evaluator_store()
    await store.insert(new_job(oid(1)))
    await store.claim("email", "me", 1_000, 1, 30_000)
    await store.heartbeat("me", 2_000)
    await store.complete(oid(1), "me", 3_000, None)
    ordinary = {name: deadline for name, deadline in adapter.deadlines}
    assert set(ordinary.values()) == {None}
    adapter.deadlines.clear()
    await store.cancel_many(StoreSelector(), 4_000)
    await store.retry_many(StoreSelector(statuses=(JobStatus.FAILED,)), 4_000, 30_000)
    await store.delete_many(StoreSelector(name="nobody"))
    await store.purge_finished(JobStatus.COMPLETED, 1)
    long = [deadline for _, deadline in adapter.deadlines]
    assert long and all(deadline == LONG_OPERATION_TIMEOUT_S for deadline in long)
