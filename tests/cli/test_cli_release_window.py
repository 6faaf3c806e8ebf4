"""``release-dead`` of an unknown or live instance, and ``health --window`` out of range, as real
processes (probe findings).

``release-dead typo`` printed "0 processing job(s) of typo can be released now; rerun with
--yes to release them" and exited 0, as did a live instance: a typo looked like a dead owner
holding nothing. ``health --window 0`` named the engine's parameter ("window_minutes must
be …"), not the flag. Each is now one line naming the fix, exit 2, jobs untouched.
"""

from __future__ import annotations

from cli_helpers import _run, enqueue, get_job
from test_cli_fleet import cli

from monque_engine import Monque
from monque_engine.timeutil import now_ms


def _owned_by(db_url: str, job_id: str, owner: str, heartbeat_ms: int) -> None:
    async def claim(m: Monque) -> None:
        sql = (
            "UPDATE monque_jobs SET status = 'processing', claimed_by = ?, locked_at = ?, "
            "last_heartbeat = ?, heartbeat_interval = 30000 WHERE id = ?"
        )
        await m.store.execute_write(  # type: ignore[attr-defined]
            lambda conn: conn.execute(sql, (owner, heartbeat_ms, heartbeat_ms, job_id))
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


def test_release_dead_refuses_a_live_instance(db_url: str) -> None:
    job_id = enqueue(db_url, "fast")
    _owned_by(db_url, job_id, "node-8", now_ms())  # heartbeat now: alive
    done = cli("release-dead", "node-8", "--yes", "--url", db_url)
    assert done.returncode == 2, done.stderr
    line = _one_line(done)
    assert "node-8 is alive" in line and "never released" in line, line
    assert get_job(db_url, job_id).status == "processing"


def test_health_window_out_of_range_names_the_flag(db_url: str) -> None:
    enqueue(db_url, "fast")
    for value in ("0", "-5", "2881", "abc"):
        done = cli("health", "--window", value, "--url", db_url)
        assert done.returncode == 2, done.stderr
        line = _one_line(done)
        assert "--window" in line and "from 1 to 2880" in line and "window_minutes" not in line, line
    assert cli("health", "--window", "2880", "--url", db_url).returncode == 0
