"""``monque-tui check`` as a real process: against the scripted wire server (a healthy replica
set, a failing index check, JSON lines), an unreachable server with a password in its URL,
a SQLite file, and bad input. The server runs in this test's event loop while the child
process talks to it over loopback; its replies are scripted (``wire/cluster_script.py``),
so this shows the command's handling of them, not a server's behaviour.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import sys
from pathlib import Path

from wire import WireServer
from wire.cluster_script import ScriptedCluster, all_indexes

CHECK_FAILED = 6


async def check(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "monque_tui",
        "check",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_healthy_cluster_exits_0_with_one_line_per_check() -> None:
    async with WireServer() as server:
        cluster = ScriptedCluster(server, owners={"node-a": 2}, registered=[])
        code, out, err = await check(server.url())
    assert code == 0, err
    lines = out.splitlines()
    topics = [line.split()[1] for line in lines]
    assert topics[:3] == ["server", "topology", "clock"]
    assert {"replication", "oplog", "indexes", "owners", "change", "transactions"} <= set(topics)
    assert all(line.split()[0] in ("OK", "WARN", "FAIL") for line in lines)
    owners = next(line for line in lines if " owners " in line)
    assert (
        owners.startswith("WARN")
        and "node-a" in owners
        and "lockTimeout" in owners
        and "must exceed your longest Python job" in owners
    )
    assert "ok, 1 warn, 0 fail" in err
    assert cluster.created == cluster.dropped  # the temporary collection is gone again


async def test_a_failing_check_exits_6_and_json_says_each_verdict() -> None:
    async with WireServer() as server:
        cluster = ScriptedCluster(server)
        cluster.indexes = [entry for entry in all_indexes() if entry["name"] != "name_1_uniqueKey_1"]
        code, out, err = await check("--json", "--url", server.url())
    assert code == CHECK_FAILED, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert all(set(row) == {"verdict", "check", "text", "fix"} for row in rows)
    failing = [row for row in rows if row["verdict"] == "fail"]
    assert [row["check"] for row in failing] == ["indexes"]
    assert "monque-tui migrate" in failing[0]["fix"]
    assert "1 fail" in err


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_unreachable_server_exits_3_with_the_password_masked() -> None:
    url = f"mongodb://ops:Hunter2-secret@127.0.0.1:{_closed_port()}/app"
    code, out, err = await check(url, "--connect-timeout", "0.5")
    assert code == 3 and out == ""
    assert "Hunter2-secret" not in err and "Cannot reach MongoDB" in err
    assert len(err.strip().splitlines()) == 1


async def test_bad_input_exits_2_in_one_line(tmp_path: Path) -> None:
    code, _, err = await check("--frobnicate", "mongodb://127.0.0.1/app")
    assert code == 2 and "unrecognized arguments: --frobnicate (see monque-tui check --help)" in err
    assert "Traceback" not in err
    code, _, err = await check("mongodb://127.0.0.1/app?replSet=rs0")
    assert code == 2 and "option 'replSet' not accepted" in err and len(err.strip().splitlines()) == 1


async def test_on_sqlite_it_reads_the_header_and_says_what_is_mongodbs(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE monque_jobs (id)")
        db.execute("CREATE TABLE monque_jobs_meta (k)")
    before = path.read_bytes()
    code, out, err = await check(f"sqlite:///{path}")
    assert code == 0, err
    assert "write-ahead log" in out and "monque_jobs" in out and "are for MongoDB" in out
    assert path.read_bytes() == before
    code, _, err = await check(f"sqlite:///{tmp_path / 'typo.db'}")
    assert code == 3 and "does not exist" in err and not (tmp_path / "typo.db").exists()


async def test_on_sqlite_a_truncated_copy_fails_instead_of_passing(tmp_path: Path) -> None:
    """A copy cut short (its tables unreadable) said "ok ... Monque collections: none readable"
    and exited 0, while every other command refused the file (probe-cli)."""
    whole = tmp_path / "whole.db"
    with sqlite3.connect(whole) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE monque_jobs (id TEXT PRIMARY KEY, data TEXT)")
        db.execute("CREATE TABLE monque_jobs_meta (k)")
        db.executemany("INSERT INTO monque_jobs VALUES (?, ?)", ((f"{n:024x}", "x" * 200) for n in range(2000)))
    db.close()
    cut = tmp_path / "cut.db"
    cut.write_bytes(whole.read_bytes()[:10_000])
    code, out, err = await check(f"sqlite:///{cut}")
    assert code == CHECK_FAILED, out + err
    assert out.startswith("FAIL") and "truncated or damaged" in out and f"{whole.stat().st_size:,}" in out, out
    assert cut.stat().st_size == 10_000
    code, out, _ = await check(f"sqlite:///{whole}")
    assert code == 0 and "Monque collections: monque_jobs" in out


async def test_on_sqlite_a_store_of_a_newer_schema_fails(tmp_path: Path) -> None:
    """A store written by a newer Monque passed ("3 ok", exit 0) while every worker of this
    version refuses to open it (probe-cli); an older one says the first worker upgrades it."""
    from monque_engine import Monque
    from monque_engine.store.sqlite.schema import SCHEMA_VERSION

    path = tmp_path / "jobs.db"
    monque = Monque(f"sqlite:///{path}")
    await monque.initialize()
    await monque.enqueue("report", {"n": 1})
    await monque.close()
    code, out, err = await check(f"sqlite:///{path}")
    assert code == 0 and f"schema version {SCHEMA_VERSION}, this monque_engine's" in out, out + err
    with sqlite3.connect(path) as db:
        db.execute("UPDATE monque_jobs_meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION + 1,))
    db.close()
    before = path.read_bytes()
    code, out, err = await check(f"sqlite:///{path}")
    assert code == CHECK_FAILED, out + err
    assert f"FAIL  schema   monque_jobs: schema version {SCHEMA_VERSION + 1}, newer than" in out, out
    assert path.read_bytes() == before
    old = tmp_path / "v1.db"
    old.write_bytes((Path(__file__).parent.parent / "fixtures" / "monque_v1.db").read_bytes())
    code, out, err = await check(f"sqlite:///{old}")
    assert code == 0 and f"the first worker of this version upgrades it to {SCHEMA_VERSION}" in out, out + err
