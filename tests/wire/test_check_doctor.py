"""``monque-tui check``'s logic (``monque_engine.check``) with the real ``AsyncMongoClient``
against the scripted wire server (``cluster_script.ScriptedCluster``): a healthy replica
set, a standalone, a missing index, a skewed clock, no change streams, refused privileges
and owners missing from the instance registry.

What this proves: that ``check`` sends what it should, reads these replies as intended and
says ok / warn / fail accordingly, and that it writes nothing but its temporary collection.
It does not prove how a MongoDB server answers (the replies are scripted from the manual).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monque_engine.check import MIXED_FLEET_RULE, CheckLine, Verdict, check_store, worst
from monque_engine.check import mongo as check_mongo
from wire import HelloOptions, WireServer
from wire.cluster_script import ScriptedCluster, all_indexes

#: Commands that write: check may send them to its temporary collection only.
WRITES = ("insert", "update", "delete", "findAndModify", "createIndexes", "dropIndexes", "create", "drop")


def by_topic(lines: list[CheckLine]) -> dict[str, CheckLine]:
    return {line.topic: line for line in lines}


async def run(server: WireServer, **options: object) -> dict[str, CheckLine]:
    lines = await check_store(server.url(), "monque_jobs", connect_timeout_s=5.0, **options)  # type: ignore[arg-type]
    return by_topic(lines)


def assert_writes_only_the_temporary_collection(server: WireServer, cluster: ScriptedCluster) -> None:
    for request in server.received:
        if request.name in WRITES:
            target = str(request[request.name])
            assert target.startswith("monque_check_"), f"check wrote {request.name} to {target}"
    assert cluster.created and cluster.dropped == cluster.created  # made one, dropped it


async def test_a_healthy_replica_set_is_all_ok(wire_server: WireServer) -> None:
    cluster = ScriptedCluster(wire_server, owners={"py-1": 4}, registered=["py-1", "py-2"])
    report = await run(wire_server)
    assert worst(list(report.values())) is Verdict.OK, report
    assert report["server"].text == "MongoDB 7.0.12"
    assert "replica set 'rs0'" in report["topology"].text and "primary" in report["topology"].text
    assert "3 member(s)" in report["replication"].text and "lag 1 s" in report["replication"].text
    assert report["oplog"].text.startswith("oplog window 72.0 h")
    assert report["change streams"].text == "a change stream saw an insert"
    assert report["transactions"].text == "a transaction committed"
    # every required index present, with the collection's size in the same line
    assert "all 18 of Monque's indexes present" in report["indexes"].text
    assert "2,000,000 jobs, 3,000.0 MB of documents, 900.0 MB of indexes" in report["indexes"].text
    assert "every owner of a processing job is a registered Python instance" in report["owners"].text
    assert_writes_only_the_temporary_collection(wire_server, cluster)
    # the transaction really was one: its insert carried startTransaction, then a commit
    assert any(r.get("startTransaction") for r in wire_server.commands("insert"))
    assert wire_server.commands("commitTransaction")


async def test_a_standalone_warns_of_polling_and_no_transactions() -> None:
    async with WireServer(HelloOptions(topology="standalone")) as server:
        cluster = ScriptedCluster(server)
        report = await run(server)
    assert report["topology"].verdict is Verdict.WARN and "standalone" in report["topology"].text
    assert "rs.initiate()" in report["topology"].fix
    assert report["change streams"].verdict is Verdict.WARN and "poll" in report["change streams"].text
    assert report["transactions"].verdict is Verdict.WARN
    assert not server.commands("replSetGetStatus") and not server.commands("find")  # nothing to ask
    assert worst(list(report.values())) is Verdict.WARN  # Monque runs there: no fail
    assert_writes_only_the_temporary_collection(server, cluster)


async def test_a_missing_console_index_on_a_large_collection_warns_with_migrate(wire_server: WireServer) -> None:
    cluster = ScriptedCluster(wire_server)
    cluster.indexes = [entry for entry in all_indexes() if entry["name"] != "status_1_updatedAt_-1__id_-1"]
    line = (await run(wire_server))["indexes"]
    assert line.verdict is Verdict.WARN
    assert "1 of 18 indexes missing" in line.text and "status_1_updatedAt_-1__id_-1" in line.text
    assert "2,000,000 jobs, 3,000.0 MB of documents" in line.text  # how much migrate will build on
    assert "monque-tui migrate URL" in line.fix


async def test_a_missing_unique_key_index_on_a_large_collection_fails(wire_server: WireServer) -> None:
    cluster = ScriptedCluster(wire_server)
    cluster.indexes = [entry for entry in all_indexes() if entry["name"] != "name_1_uniqueKey_1"]
    line = (await run(wire_server))["indexes"]
    assert line.verdict is Verdict.FAIL and "refuse to start" in line.fix


async def test_the_retention_index_is_required_only_when_asked(wire_server: WireServer) -> None:
    ScriptedCluster(wire_server)  # every index but the retention one
    assert (await run(wire_server))["indexes"].verdict is Verdict.OK
    line = (await run(wire_server, retention=True))["indexes"]
    assert line.verdict is Verdict.WARN and "status_1_updatedAt_1" in line.text and "--retention" in line.fix


async def test_missing_indexes_on_a_small_collection_are_built_by_the_first_worker(wire_server: WireServer) -> None:
    cluster = ScriptedCluster(wire_server, documents=500)
    cluster.indexes = all_indexes()[:3]
    line = (await run(wire_server))["indexes"]
    assert line.verdict is Verdict.OK and "the first worker builds them" in line.text


@pytest.mark.parametrize(("skew_s", "verdict"), [(120.0, Verdict.FAIL), (-8.0, Verdict.WARN)])
async def test_a_skewed_server_clock(skew_s: float, verdict: Verdict) -> None:
    ahead = datetime.now(UTC) + timedelta(seconds=skew_s)
    async with WireServer(HelloOptions(local_time=ahead)) as server:
        ScriptedCluster(server)
        line = (await run(server))["clock"]
    assert line.verdict is verdict, line
    assert ("ahead of" if skew_s > 0 else "behind") in line.text and "NTP" in line.fix


async def test_no_change_streams_for_this_user(wire_server: WireServer) -> None:
    ScriptedCluster(wire_server, refused={"changeStream"})
    report = await run(wire_server)
    line = report["change streams"]
    assert line.verdict is Verdict.WARN and "refused" in line.text and "polling" in line.text
    assert "changeStream" in line.fix
    assert report["transactions"].verdict is Verdict.OK  # the probe went on


async def test_a_change_stream_that_delivers_nothing_warns(
    wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check_mongo, "CHANGE_EVENT_WAIT_S", 0.3)  # the wait itself is not under test
    ScriptedCluster(wire_server, deliver_events=False)
    line = (await run(wire_server))["change streams"]
    assert line.verdict is Verdict.WARN and "did not deliver" in line.text


async def test_refused_privileges_are_said_not_failed(wire_server: WireServer) -> None:
    ScriptedCluster(wire_server, refused={"replSetGetStatus", "oplog"})
    report = await run(wire_server)
    assert report["replication"].verdict is Verdict.WARN and "clusterMonitor" in report["replication"].fix
    assert report["oplog"].verdict is Verdict.WARN and "not checked" in report["oplog"].text
    assert worst(list(report.values())) is Verdict.WARN


async def test_a_lagging_secondary_and_a_short_oplog_warn(wire_server: WireServer) -> None:
    ScriptedCluster(wire_server, lags=[0.0, 95.0], oplog_window_s=600)
    report = await run(wire_server)
    assert report["replication"].verdict is Verdict.WARN and "lag 95 s" in report["replication"].text
    assert report["oplog"].verdict is Verdict.WARN and report["oplog"].text.startswith("oplog window 10 min")


async def test_owners_missing_from_the_registry_are_named_with_the_mixed_fleet_rule(wire_server: WireServer) -> None:
    ScriptedCluster(wire_server, owners={"node-host-4711": 3, "py-1": 2}, registered=["py-1"])
    line = (await run(wire_server))["owners"]
    assert line.verdict is Verdict.WARN
    assert "node-host-4711 (3 job(s))" in line.text and "py-1" not in line.text
    assert line.fix == MIXED_FLEET_RULE and "lockTimeout" in line.fix and "longest Python job" in line.fix


async def test_a_user_who_may_not_create_a_collection_gets_a_warning_and_nothing_to_drop(
    wire_server: WireServer,
) -> None:
    cluster = ScriptedCluster(wire_server, refused={"create"})
    report = await run(wire_server)
    line = report["temporary collection"]
    assert line.verdict is Verdict.WARN and "readWrite" in line.fix
    assert "change streams" not in report and not cluster.created and not wire_server.commands("drop")


async def test_a_probe_failing_midway_still_drops_the_temporary_collection(wire_server: WireServer) -> None:
    cluster = ScriptedCluster(wire_server, refused={"insert"})
    report = await run(wire_server)
    assert report["temporary collection"].verdict is Verdict.FAIL  # the insert was refused
    assert cluster.created and cluster.dropped == cluster.created
    assert "cleanup" not in report


async def test_a_failing_transaction_fails_the_check(wire_server: WireServer) -> None:
    cluster = ScriptedCluster(wire_server, refused={"transaction"})
    report = await run(wire_server)
    line = report["transactions"]
    assert line.verdict is Verdict.FAIL and "enqueue_many" in line.fix
    assert worst(list(report.values())) is Verdict.FAIL
    assert cluster.dropped == cluster.created
