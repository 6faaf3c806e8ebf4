"""``monque-tui cancel --running``: the filter language reaches running jobs too (issue 37
part 2). A real worker process runs the job (``tests/procs/worker.py --hang async``) and the
command is a real subprocess on the same SQLite file; the tests wait on the worker's lines.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from test_cli_fleet import cli

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from monque_engine import Monque  # noqa: E402
from monque_engine.timeutil import now_ms  # noqa: E402
from tests.procs.harness import Launcher, StoreProbe  # noqa: E402
from tests.test_multiprocess import READY_TIMEOUT, enqueue_here  # noqa: E402

WAIT = 30.0


def test_cancel_running_counts_then_stops_the_running_job_and_cancels_the_pending_one(
    procs: Launcher, db: Path, runs_dir: Path, probe: StoreProbe
) -> None:
    url = f"sqlite:///{db}"
    args = ["--db", db, "--instance", "w-cli", "--runs-dir", runs_dir, "--print-jobs", "--poll-interval", "0.1"]
    worker = procs.start("w-cli", "worker", *args, "--hang", "async", "--concurrency", 1)
    worker.wait_for("ready", READY_TIMEOUT)
    [running] = enqueue_here(db, "task", 1)
    worker.wait_for("hanging", WAIT, where=lambda line: line["job_id"] == running)
    [waiting] = enqueue_here(db, "task", 1)  # the one slot is taken: it stays pending

    counted = cli("cancel", "--name", "task", "--running", "--url", url)
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == "2" and "1 pending job(s) to cancel and 1 running job(s) to stop" in counted.stderr
    plain = cli("cancel", "--name", "task", "--url", url)  # without --running: the pending one only
    assert plain.stdout.strip() == "1"

    done = cli("cancel", "--name", "task", "--running", "--yes", "--url", url)
    assert done.returncode == 0, done.stderr
    assert "cancelled 1 of 1 pending job(s) and asked 1 of 1 running job(s) to stop" in done.stderr
    worker.wait_for("job:cancelled", WAIT, where=lambda line: line["job_id"] == running)
    assert {job_id: (probe.job(job_id) or {}).get("status") for job_id in (running, waiting)} == {
        running: "cancelled",
        waiting: "cancelled",
    }


def test_a_running_job_of_an_unregistered_owner_is_one_line_exit_2_and_untouched(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"

    async def claimed_by_node() -> str:
        async with Monque(url) as monque:
            job = await monque.enqueue("task", {})
            await monque.store.claim("task", "node-worker-1", now_ms(), 1, 30_000)
            return job.id

    job_id = asyncio.run(claimed_by_node())
    done = cli("cancel", "--id", job_id, "--running", "--yes", "--url", url)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not in the instance registry" in lines[0] and "Traceback" not in done.stderr

    async def stored() -> tuple[str, int | None]:
        async with Monque(url) as monque:
            job = await monque.get_job(job_id)
            assert job is not None
            return job.status.value, job.stop_requested_at_ms

    assert asyncio.run(stored()) == ("processing", None)
