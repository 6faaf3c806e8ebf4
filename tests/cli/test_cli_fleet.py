"""``monque-tui pause|resume|paused|instances|release-dead|health|export`` as real processes (issue 13)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cli_helpers import CLI_DIR, CliProcess, _run, enqueue, get_job

from monque_engine import Monque
from monque_engine.timeutil import now_ms

APP = "apps.worker_app:setup"


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    return subprocess.run(
        [sys.executable, "-m", "monque_tui", *args],
        cwd=CLI_DIR,
        env=env,
        text=True,
        capture_output=True,
        timeout=timeout,
    )


def test_pause_resume_and_paused_for_scripts(spawn: Callable[..., CliProcess], db_url: str) -> None:
    # Paused before the worker starts: a worker loads the paused set before its first claim,
    # so this is deterministic (the live, cross-process case is in test_fleet_multiprocess.py).
    # No file yet: without --force it is refused and nothing is made (the refusal left a new
    # file behind); with --force it is made, and the line says so.
    path = db_url.removeprefix("sqlite:///")
    refused = cli("pause", "fast", "--url", db_url)
    assert refused.returncode == 2 and "does not exist" in refused.stderr and "--force" in refused.stderr
    assert not Path(path).exists(), refused.stderr
    done = cli("pause", "fast", "--force", "--url", db_url)
    assert (done.returncode, done.stderr.strip()) == (
        0,
        f"paused fast in a new, empty store: {path} did not exist (check the path if you meant an existing one)",
    )
    assert cli("pause", "fast", "--url", db_url).stderr.strip() == "fast was already paused"
    listed = cli("paused", "--url", db_url)
    assert listed.returncode == 0 and listed.stdout.split("\t")[0] == "fast"
    held = enqueue(db_url, "fast")
    worker = spawn("--worker", "--app", APP, "--log-format", "json", "--poll-interval", "0.1", db_url)
    started = worker.wait_for_event("worker:started")
    # The log says a name is paused, and how much waits (it listed it like any other; issue 40).
    assert started["paused"] == ["fast"] and "fast (concurrency" in started["message"]
    assert "PAUSED" in started["message"].split("fast (concurrency", 1)[1].split(")", 1)[0]
    warned = worker.wait_for_event("worker:paused-name")
    assert (warned["name"], warned["due"], warned["level"]) == ("fast", 1, "warning"), warned
    other = enqueue(db_url, "sync.fast")  # another name still runs
    worker.wait_for_event("job:complete", job_id=other)
    assert get_job(db_url, held).status == "pending"
    assert cli("resume", "fast", "--url", db_url).stderr.strip() == "resumed fast"
    worker.wait_for_event("job:complete", job_id=held)
    emptied = cli("paused", "--url", db_url)
    assert (emptied.returncode, emptied.stdout, emptied.stderr.strip()) == (0, "", "nothing paused")
    # Who consumes each name: health had no CONSUMERS column (issue 40). A job due in an hour
    # keeps "fast" listed while its worker idles.
    _run(db_url, lambda m: m.enqueue("fast", {"later": True}, run_at=datetime.now(UTC) + timedelta(hours=1)))
    lines = cli("health", "--url", db_url).stdout.splitlines()
    header = lines[0].split("\t")
    consumers = {row.split("\t")[0]: row.split("\t")[header.index("CONSUMERS")] for row in lines[1:]}
    assert header[-1] == "FAILED ATTEMPTS/60m", header  # not FAILED: named apart (issue 40)
    assert consumers["fast"].startswith("1x"), lines
    live = {d["name"]: d for d in map(json.loads, cli("health", "--json", "--url", db_url).stdout.splitlines())}
    assert live["fast"]["consumers"]["instances"] == 1 and live["fast"]["consumers"]["concurrency"] >= 1
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    # The worker flushed its per-minute counters when it stopped.
    health = {d["name"]: d for d in map(json.loads, cli("health", "--json", "--url", db_url).stdout.splitlines())}
    assert health["fast"]["paused"] is False and sum(m["completed"] for m in health["fast"]["perMinute"]) == 1
    assert health["fast"]["consumers"] is None  # the stopped worker left the registry


def test_instances_and_release_dead(db_url: str) -> None:
    job_id = enqueue(db_url, "fast")

    async def fake_dead_owner(m: Monque) -> None:
        store = m.store
        sql = (
            "UPDATE monque_jobs SET status = 'processing', claimed_by = 'node-7', locked_at = ?, "
            "last_heartbeat = ?, heartbeat_interval = 1000 WHERE id = ?"
        )
        stale = now_ms() - 60_000
        await store.execute_write(lambda conn: conn.execute(sql, (stale, stale, job_id)))  # type: ignore[attr-defined]

    _run(db_url, fake_dead_owner)
    listed = cli("instances", "--url", db_url)
    assert listed.returncode == 0
    header, row = listed.stdout.splitlines()
    assert header.split("\t")[:4] == ["ID", "KIND", "STATE", "JOBS"]
    assert row.split("\t")[:4] == ["node-7", "inferred", "dead", "1"]
    assert row.split("\t")[-1] == "-"  # SUPERVISOR: not a child of a --processes group
    assert row.split("\t")[4] == "1m ago"  # the heartbeat's age read "60s", and "853s" for 14 minutes
    (as_json,) = [json.loads(line) for line in cli("instances", "--json", "--url", db_url).stdout.splitlines()]
    assert (as_json["id"], as_json["inferred"], as_json["alive"], as_json["jobsHeld"]) == ("node-7", True, False, 1)
    assert as_json["lastHeartbeat"].endswith("Z") and as_json["host"] is None
    asked = cli("release-dead", "node-7", "--url", db_url)
    assert asked.returncode == 0 and "1 processing job(s) of node-7 can be released now" in asked.stderr
    assert get_job(db_url, job_id).status == "processing"  # nothing without --yes
    released = cli("release-dead", "node-7", "--yes", "--url", db_url)
    assert released.stderr.strip() == "released 1 job(s) of node-7 back to pending"
    assert get_job(db_url, job_id).status == "pending"


def test_export_streams_to_a_file_with_progress_and_to_stdout(tmp_path: Path, db_url: str) -> None:
    async def fill(m: Monque) -> None:
        for first in range(0, 1200, 400):
            await m.enqueue_many([{"name": "report", "data": {"n": n}} for n in range(first, first + 400)])
        await m.enqueue("other")

    _run(db_url, fill)
    target = tmp_path / "out.jsonl"
    done = cli("export", "--url", db_url, "--name", "report", "--status", "pending", "--output", str(target))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "exported 500/1200 jobs" and lines[-2] == "exported 1200/1200 jobs"
    assert lines[-1] == f"exported 1200 job(s) to {target} (jsonl)"
    docs = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(docs) == 1200 and {d["name"] for d in docs} == {"report"}
    small = cli("export", "--url", db_url, "--name", "other", "--format", "csv", "--output", "-")
    assert small.returncode == 0 and small.stdout.splitlines()[0].startswith("_id,name,status,")
    assert len(small.stdout.splitlines()) == 2 and small.stderr.strip() == "exported 1 job(s) to stdout (csv)"


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path: Path, db_url: str) -> None:
    enqueue(db_url, "fast")
    bad_status = cli("export", "--url", db_url, "--status", "done")
    assert bad_status.returncode == 2 and len(bad_status.stderr.splitlines()) == 1
    assert "use one or more of pending, processing, completed, failed, cancelled" in bad_status.stderr
    missing = cli("paused", "--url", f"sqlite:///{tmp_path / 'typo.db'}")
    assert missing.returncode == 3 and "does not exist" in missing.stderr and len(missing.stderr.splitlines()) == 1
    assert not (tmp_path / "typo.db").exists()
    bad_name = cli("pause", "two words", "--url", db_url)
    assert bad_name.returncode == 2 and "Traceback" not in bad_name.stderr and "Invalid job name" in bad_name.stderr
    masked = cli("paused", "--url", "mongodb://admin:hunter2@127.0.0.1:1/app", "--connect-timeout", "0.2")
    assert masked.returncode == 3 and "hunter2" not in masked.stderr and "***" in masked.stderr
    assert cli("export", "--help").returncode == 0


def test_the_store_url_may_come_last_as_for_the_console(tmp_path: Path, db_url: str) -> None:
    """``monque-tui export sqlite:///jobs.db`` was "unrecognized arguments": the console and
    --worker take the URL last, the commands only as --url."""
    job_id = enqueue(db_url, "fast")
    exported = cli("export", "--format", "jsonl", db_url)
    assert exported.returncode == 0, exported.stderr
    assert [json.loads(line)["_id"] for line in exported.stdout.splitlines()] == [job_id]
    assert cli("pause", "fast", db_url).stderr.strip() == "paused fast"
    assert cli("paused", db_url).stdout.split("\t")[0] == "fast"
    assert cli("resume", "fast", db_url, "--url", db_url).stderr.strip() == "resumed fast"  # the same one twice
    both = cli("paused", db_url, "--url", "mongodb://admin:hunter2@127.0.0.1:1/app")
    assert both.returncode == 2 and "two store URLs" in both.stderr and "hunter2" not in both.stderr
    # resume on a mistyped path creates nothing (there is nothing to resume there)
    typo = tmp_path / "typo.db"
    missing = cli("resume", "fast", f"sqlite:///{typo}")
    assert missing.returncode == 3 and "does not exist" in missing.stderr and not typo.exists()
