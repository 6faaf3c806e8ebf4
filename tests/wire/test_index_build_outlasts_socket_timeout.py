"""An index build that takes longer than the socket timeout (issue 36, defect 1).

DRIVER LEVEL: the real ``AsyncMongoClient`` of a real ``MongoStore`` against the scripted
wire server, whose ``createIndexes`` answers later than the client's socket timeout (a
tiny ``socketTimeoutMS`` in the URL, so nothing waits long). What this proves: the
driver's socket timeout no longer cuts the build short, and every missing index goes in
one ``createIndexes`` (one collection scan,
https://www.mongodb.com/docs/manual/reference/command/createIndexes/ : "builds one or more
indexes"). It does not time a build on a server.
"""

from __future__ import annotations

from typing import Any

import pytest

from monque_engine.errors import ConnectionError
from monque_engine.store.mongo.index_build import BUILD_AT_OPEN_MAX_DOCS
from monque_engine.store.mongo.indexes import index_models
from wire import Action, Delay, Error, Request, WireServer
from wire.store import JOBS, CollectionScript, open_store, script_collection

SOCKET_TIMEOUT_MS = 100
#: The build answers this long after it arrives: five socket timeouts.
BUILD_S = 5 * SOCKET_TIMEOUT_MS / 1000


def _jobs_builds(server: WireServer) -> list[Request]:
    return [r for r in server.commands("createIndexes") if r["createIndexes"] == JOBS]


def _slow_build(server: WireServer, script: CollectionScript) -> None:
    """The jobs collection's build answers late; the side collections' at once."""

    def build(request: Request) -> Action:
        reply = script.create_indexes(request)
        return Delay(BUILD_S, reply) if request["createIndexes"] == JOBS else reply

    server.handle("createIndexes", build)


async def test_migrate_builds_every_missing_index_in_one_command_past_the_socket_timeout(
    wire_server: WireServer,
) -> None:
    models = index_models(False)
    names = [str(m.document["name"]) for m in models]
    present = names[:2]
    script = script_collection(wire_server, documents=10_000_000, present=present)
    store = await open_store(wire_server, create_indexes=False, socketTimeoutMS=SOCKET_TIMEOUT_MS)
    try:
        _slow_build(wire_server, script)
        seen: list[tuple[str, str]] = []
        built = await store.build_indexes(lambda i, n, name, state: seen.append((name, state)))
    finally:
        await store.close()
    builds = _jobs_builds(wire_server)
    assert len(builds) == 1  # one collection scan builds them all
    assert [index["name"] for index in builds[0]["indexes"]] == names[2:]
    assert built == len(names) - 2
    assert set(script.indexes) == set(names)
    states = dict(seen)
    assert states[names[0]] == "present" and states[names[-1]].startswith("built in ")
    # No deadline was sent for the build either: the server is never told to give up.
    assert "maxTimeMS" not in builds[0].command


async def test_migrate_ignores_a_timeoutMS_from_the_url(wire_server: WireServer) -> None:
    """``timeoutMS`` in the URL is a per-operation deadline for the workers; the deploy
    step's build is not bounded by it."""
    script = script_collection(wire_server, documents=10_000_000, present=[])
    store = await open_store(wire_server, create_indexes=False, timeoutMS=SOCKET_TIMEOUT_MS)
    try:
        _slow_build(wire_server, script)
        assert await store.build_indexes() == len(index_models(False))
    finally:
        await store.close()


async def test_indexes_built_at_open_may_outlast_the_socket_timeout(wire_server: WireServer) -> None:
    script = script_collection(wire_server, documents=BUILD_AT_OPEN_MAX_DOCS, present=[])
    _slow_build(wire_server, script)
    store = await open_store(wire_server, socketTimeoutMS=SOCKET_TIMEOUT_MS)
    await store.close()
    assert len(_jobs_builds(wire_server)) == 1
    assert store.missing_indexes == []


async def test_a_build_the_server_fails_is_one_clear_error(wire_server: WireServer) -> None:
    script_collection(wire_server, documents=10_000_000, present=[])
    store = await open_store(wire_server, create_indexes=False)
    wire_server.reply(
        "createIndexes", Error(86, "Index with name: x already exists with different options", "IndexKeySpecsConflict")
    )
    try:
        with pytest.raises(ConnectionError) as info:
            await store.build_indexes()
    finally:
        await store.close()
    assert "build the jobs collection's indexes" in str(info.value) and "already exists" in str(info.value)


async def test_a_borrowed_client_with_a_socket_timeout_builds_under_a_day_long_deadline(
    wire_server: WireServer,
) -> None:
    """A store on the host application's own client cannot lift that client's socket
    timeout; the build runs under ``BORROWED_BUILD_DEADLINE_S``, which replaces it."""
    from pymongo import AsyncMongoClient

    from monque_engine.store.base import StoreOpenOptions
    from monque_engine.store.mongo import MongoStore
    from monque_engine.store.mongo.index_build import BORROWED_BUILD_DEADLINE_S

    script = script_collection(wire_server, documents=10_000_000, present=[])
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(wire_server.url(), socketTimeoutMS=SOCKET_TIMEOUT_MS)
    store = MongoStore(client["monque"])
    try:
        await store.open(StoreOpenOptions(create_indexes=False))
        _slow_build(wire_server, script)
        assert await store.build_indexes() == len(index_models(False))
        await store.close()
    finally:
        await client.close()
    deadline_ms = _jobs_builds(wire_server)[0]["maxTimeMS"]
    assert BORROWED_BUILD_DEADLINE_S * 1000 - 60_000 < deadline_ms <= BORROWED_BUILD_DEADLINE_S * 1000
