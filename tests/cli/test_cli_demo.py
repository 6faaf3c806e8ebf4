"""``monque-tui --demo --headless``: the demo without Textual, as a real process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cli_helpers import CliProcess, jobs

from monque_tui.demo.app import HANDLERS, RECURRING_KEY, RECURRING_NAME


def run_demo(spawn: Callable[..., CliProcess], url: str, duration: str = "2") -> CliProcess:
    demo = spawn(
        "--demo", "--headless", "--duration", duration, "--summary-interval", "0.5", "--log-format", "json", url
    )
    assert demo.wait_exit(timeout=40) == 0, demo.stderr
    return demo


def test_headless_demo_processes_jobs_and_prints_progress(spawn: Callable[..., CliProcess], db_url: str) -> None:
    demo = run_demo(spawn, db_url)
    records = [json.loads(line) for line in demo.lines]
    started = next(r for r in records if r["event"] == "worker:started")
    assert set(started["names"]) == set(HANDLERS)
    summaries = [r for r in records if r["event"] == "summary"]
    assert len(summaries) >= 2 and summaries[-1]["final"] is True
    assert summaries[-1]["processed"] > 0
    stored = jobs(db_url)
    assert any(job.status == "completed" for job in stored)
    assert {job.name for job in stored} <= set(HANDLERS)
    recurring = [job for job in stored if job.name == RECURRING_NAME]
    assert len(recurring) == 1 and recurring[0].unique_key == RECURRING_KEY
    assert recurring[0].repeat_interval == "*/5 * * * * *"


def test_restarting_the_demo_reuses_the_database_without_a_second_schedule(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    run_demo(spawn, db_url, duration="0.5")
    first = len(jobs(db_url))
    run_demo(spawn, db_url, duration="0.5")
    stored = jobs(db_url)
    assert len(stored) > first  # reused: the first run's jobs are still there
    assert len([job for job in stored if job.name == RECURRING_NAME]) == 1


def test_demo_uses_its_own_file_and_ignores_monque_url(spawn: Callable[..., CliProcess], tmp_path: Path) -> None:
    # MONQUE_URL may name a real queue; the demo must not write demo jobs into it.
    demo = spawn(
        "--demo", "--headless", "--duration", "0.3", cwd=tmp_path, env={"MONQUE_URL": "sqlite:///production.db"}
    )
    assert demo.wait_exit(timeout=40) == 0, demo.stderr
    assert (tmp_path / "monque-demo.db").exists()
    assert not (tmp_path / "production.db").exists()
