"""``release-dead`` of an unknown or live instance, and ``health --window`` out of range, as real
processes (probe findings).

``release-dead typo`` printed "0 processing job(s) of typo can be released now; rerun with
--yes to release them" and exited 0, as did a live instance: a typo looked like a dead owner
holding nothing. ``health --window 0`` named the engine's parameter ("window_minutes must
be …"), not the flag. Each is now one line naming the fix, exit 2, jobs untouched.
"""

from __future__ import annotations

import signal
from pathlib import Path

from cli_helpers import _run, enqueue, get_job, wait_for_status
from test_cli_fleet import cli

from monque_engine import Monque
from monque_engine.timeutil import now_ms
from tests.procs.harness import Launcher


def _owned_by(db_url: str, job_id: str, owner: str, heartbeat_ms: int, interval_ms: int = 30_000) -> None:
    async def claim(m: Monque) -> None:
        sql = (
            "UPDATE monque_jobs SET status = 'processing', claimed_by = ?, locked_at = ?, "
            "last_heartbeat = ?, heartbeat_interval = ? WHERE id = ?"
        )
        await m.store.execute_write(  # type: ignore[attr-defined]
            lambda conn: conn.execute(sql, (owner, heartbeat_ms, heartbeat_ms, interval_ms, job_id))
        )

    _run(db_url, claim)


def _one_line(done: object) -> str:
    stderr = done.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    return stderr.strip()


def test_release_dead_refuses_an_unknown_instance(db_url: str) -> None:
    job_id = enqueue(db_url, "fast")
    _owned_by(db_url, job_id, "node-7", now_ms() - 600_000)  # a dead owner exists: the typo is not it
    for extra in ((), ("--yes",)):
        done = cli("release-dead", "node-77", *extra, "--url", db_url)
        assert done.returncode == 2, done.stderr
        line = _one_line(done)
        assert "no instance 'node-77' on this store" in line and "monque-tui instances" in line, line
    assert get_job(db_url, job_id).status == "processing"


def test_release_dead_refuses_a_live_instance(db_url: str, procs: Launcher, tmp_path: Path) -> None:
    """Alive means beating: a real worker holding a long job, its heartbeat every 0.2 s."""
    runs = tmp_path / "runs"
    runs.mkdir()
    worker = procs.start(
        "node-8",
        "worker",
        *("--db", db_url.removeprefix("sqlite:///"), "--instance", "node-8", "--runs-dir", runs),
        *("--concurrency", 1, "--delay", 600, "--heartbeat-interval", 0.2),
    )
    worker.wait_for("ready", 30)
    job_id = enqueue(db_url, "task")
    wait_for_status(db_url, job_id, "processing")
    done = cli("release-dead", "node-8", "--yes", "--url", db_url)
    assert done.returncode == 2, done.stderr
    line = _one_line(done)
    assert "node-8 is alive" in line and "heartbeat moved" in line and "never released" in line, line
    assert get_job(db_url, job_id).status == "processing"
    worker.signal(signal.SIGKILL)


def test_release_dead_releases_a_dead_owner_whose_clock_was_ahead(db_url: str) -> None:
    """A Node worker on a machine an hour ahead, then killed: its last beat reads as an hour
    in the future here. Judged by this machine's clock it was "alive" for the next hour and
    could not be released; judged by its heartbeat not moving, it is dead after 2 x 1 s + 1 s."""
    job_id = enqueue(db_url, "fast")
    _owned_by(db_url, job_id, "node-9", now_ms() + 3_600_000, interval_ms=1_000)
    done = cli("release-dead", "node-9", "--yes", "--url", db_url)
    assert (done.returncode, done.stderr.strip()) == (0, "released 1 job(s) of node-9 back to pending"), done.stderr
    assert get_job(db_url, job_id).status == "pending"


def test_health_window_out_of_range_names_the_flag(db_url: str) -> None:
    enqueue(db_url, "fast")
    for value in ("0", "-5", "2881", "abc"):
        done = cli("health", "--window", value, "--url", db_url)
        assert done.returncode == 2, done.stderr
        line = _one_line(done)
        assert "--window" in line and "from 1 to 2880" in line and "window_minutes" not in line, line
    assert cli("health", "--window", "2880", "--url", db_url).returncode == 0
