"""The console, the command line and the API select the same jobs for the same filter on
one store (issue 39): name + status + updated-from, through the console's session core
(its filter bar's ``JobQuery``), ``monque-tui export`` in a subprocess, and the API's
``GET /api/v1/jobs``; and each bulk count (console plan, API count route) agrees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from api_support import ApiClient

from monque_engine import Job, JobStatus, Monque
from monque_engine.management import ManagementApi
from monque_tui.console.actions import ActionKind
from monque_tui.console.clock import frozen_clock
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.query import JobQuery, parse_ranges
from monque_tui.console.session import ConsoleSession

T0 = 1_780_000_000_000  # 2026-05-28T20:26:40Z
FROM = "2026-05-28T20:27:00Z"  # T0 + 20 s
NOW = T0 + 3_600_000


def _seed() -> list[Job]:
    jobs = []
    for n in range(40):
        name = ("email", "report")[n % 2]
        status = (JobStatus.FAILED, JobStatus.PENDING, JobStatus.FAILED, JobStatus.COMPLETED)[n % 4]
        at = T0 + n * 1000  # updated 0..39 s after T0: half of them from FROM on
        jobs.append(
            Job(
                id=f"65f0{n:020x}", name=name, data={"n": n}, status=status,
                next_run_at_ms=at, created_at_ms=at - 500, updated_at_ms=at,
                fail_count=1 if status is JobStatus.FAILED else 0,
            )
        )  # fmt: skip
    return jobs


def _cli_export(url: str) -> list[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MONQUE_")}
    done = subprocess.run(
        [sys.executable, "-m", "monque_tui", "export", "--name", "email", "--status", "failed",
         "--updated-from", FROM, "--url", url],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["_id"] for line in done.stdout.splitlines()]


async def test_console_cli_and_api_select_the_same_jobs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    await monque.import_jobs(_seed())
    expected = {f"65f0{n:020x}" for n in range(20, 40) if n % 2 == 0 and n % 4 in (0, 2)}
    assert len(expected) == 10
    try:
        client = ApiClient(ManagementApi(monque))
        page = await client.ok(
            "GET", "/api/v1/jobs", {"name": "email", "status": "failed", "updatedAtFrom": FROM, "limit": "100"}
        )
        api_ids = [job["id"] for job in page["jobs"]]
        counted = await client.ok(
            "POST",
            "/api/x/v1/jobs/actions/retry/count",
            body={"name": "email", "status": "failed", "updatedAtFrom": FROM},
        )
    finally:
        await monque.close()

    session = ConsoleSession(ConsoleConfig(url=url), clock=frozen_clock(NOW), live=False, emit=lambda event: None)
    await session.open()
    try:
        query = JobQuery(name="email", status=JobStatus.FAILED, ranges=parse_ranges(f"updated {FROM}..", NOW))
        session.set_query(query)
        await session.load_top()
        console_ids = [job.id for job in session.window.rows]
        plan = await session.plan_bulk(ActionKind.RETRY)
        assert plan is not None
    finally:
        await session.close()

    cli_ids = _cli_export(url)
    assert set(api_ids) == set(console_ids) == set(cli_ids) == expected
    assert api_ids == console_ids  # the same order too: newest created first
    assert plan.count == counted["count"] == len(expected)
