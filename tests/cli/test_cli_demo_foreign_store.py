"""``--demo URL`` on an application's store is refused before anything runs (probe-cli).

The demo registers handlers for its five names (which "complete" any job of those names
without doing its work) and runs with job retention, which deletes completed jobs older
than 10 minutes and failed jobs older than an hour of every name. ``monque-tui --demo
--headless sqlite:///jobs.db`` on a store with an application's jobs deleted its old failed
jobs within seconds and ran its pending ``email.send`` jobs through the demo's handler.
Real processes on real SQLite files.
"""

from __future__ import annotations

import os
import subprocess
import sys

from cli_helpers import CLI_DIR, enqueue, jobs

from monque_tui.cli.demo_store import foreign_names
from monque_tui.demo.app import DEMO_MARK_KEY, HANDLERS


def run_demo(url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    command = [sys.executable, "-m", "monque_tui", "--demo", "--headless", "--duration", "2", url]
    return subprocess.run(command, cwd=CLI_DIR, env=env, text=True, capture_output=True, timeout=60)


def test_a_store_with_an_applications_jobs_is_refused_and_left_as_it_was(db_url: str) -> None:
    enqueue(db_url, "billing.charge", {"invoice": 7})
    enqueue(db_url, "email.send", {"to": "real-customer@example.com"})  # a demo name, the application's job
    before = sorted((job.id, job.name, job.status, job.updated_at) for job in jobs(db_url))
    done = run_demo(db_url)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: --demo: "), done.stderr
    assert "'billing.charge'" in lines[0] and "monque-demo.db" in lines[0]
    assert sorted((job.id, job.name, job.status, job.updated_at) for job in jobs(db_url)) == before


def test_the_demos_own_store_runs_again(db_url: str) -> None:
    first = run_demo(db_url)  # a new file: the demo makes its store
    assert first.returncode == 0, first.stderr
    made = jobs(db_url)
    assert made and all(job.data.get(DEMO_MARK_KEY) is True for job in made)  # every job it made is marked
    again = run_demo(db_url)
    assert again.returncode == 0, again.stderr
    assert {job.name for job in jobs(db_url)} <= set(HANDLERS)


def test_a_store_of_the_demos_names_without_its_mark_is_refused(db_url: str) -> None:
    """The README tour's store holds ``email.send`` jobs only, one of the demo's names: the
    demo ran on it (its handlers, its retention), as the names alone said it was its own
    (a docs probe). Jobs the demo makes carry its mark; these do not."""
    enqueue(db_url, "email.send", {"to": "real-customer@example.com"})
    before = sorted((job.id, job.name, job.status, job.updated_at) for job in jobs(db_url))
    done = run_demo(db_url)
    assert done.returncode == 2, done.stderr
    assert "1 job(s) the demo did not make" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert sorted((job.id, job.name, job.status, job.updated_at) for job in jobs(db_url)) == before


def test_foreign_names_are_the_ones_the_demo_does_not_make() -> None:
    assert foreign_names(["email.send", "zeta", "alpha"], HANDLERS) == ["alpha", "zeta"]
    assert foreign_names(list(HANDLERS), HANDLERS) == []
