"""The scripted wire server against the real ``AsyncMongoClient``: handshake, a scripted
reply, a scripted error, a dropped connection, recording. These test the test tool (what
it answers), not a MongoDB server."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo import AsyncMongoClient
from pymongo.errors import AutoReconnect, OperationFailure

from wire import CLOSE, Error, HelloOptions, WireServer, cursor_reply


def client(server: WireServer, **options: Any) -> AsyncMongoClient[dict[str, Any]]:
    return AsyncMongoClient(server.url(), serverSelectionTimeoutMS=2_000, **options)


async def test_the_driver_connects_and_gets_scripted_replies(wire_server: WireServer) -> None:
    wire_server.reply("find", cursor_reply("monque.jobs", [{"_id": 1, "name": "email"}]))
    mongo = client(wire_server)
    try:
        assert (await mongo.admin.command("ping"))["ok"] == 1.0
        docs = await mongo.monque.jobs.find({"name": "email"}).to_list(None)
        assert docs == [{"_id": 1, "name": "email"}]
        find = wire_server.commands("find")[0]
        assert find["filter"] == {"name": "email"} and find.database == "monque"
        with pytest.raises(OperationFailure) as failure:
            await mongo.monque.jobs.find_one({})  # nothing scripted: error 59, never a made-up reply
        assert failure.value.code == 59
    finally:
        await mongo.close()


async def test_document_sequences_are_folded_into_the_command(wire_server: WireServer) -> None:
    wire_server.reply("insert", {"n": 2})
    mongo = client(wire_server)
    try:
        await mongo.monque.jobs.insert_many([{"_id": 1}, {"_id": 2}])
        insert = await wire_server.wait_for("insert")
        assert [doc["_id"] for doc in insert["documents"]] == [1, 2]
        assert "lsid" in insert.command  # the driver saw a replica-set primary with sessions
    finally:
        await mongo.close()


async def test_errors_and_a_dropped_connection_reach_the_driver_as_such(wire_server: WireServer) -> None:
    wire_server.reply("count", Error(13, "not authorized", "Unauthorized"), CLOSE)
    mongo = client(wire_server, retryReads=False)
    try:
        with pytest.raises(OperationFailure) as failure:
            await mongo.monque.command("count", "jobs")
        assert failure.value.code == 13
        with pytest.raises(AutoReconnect):
            await mongo.monque.command("count", "jobs")
    finally:
        await mongo.close()


async def test_a_standalone_without_change_streams() -> None:
    async with WireServer(HelloOptions(topology="standalone", version="6.0.3")) as server:
        mongo = client(server)
        try:
            assert (await mongo.admin.command("buildInfo"))["version"] == "6.0.3"
            with pytest.raises(OperationFailure) as failure:
                await mongo.monque.jobs.watch()
            assert failure.value.code == 40573
            hello = await mongo.admin.command("hello")
            assert "setName" not in hello
        finally:
            await mongo.close()
