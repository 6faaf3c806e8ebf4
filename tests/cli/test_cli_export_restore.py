"""``monque-tui export`` writes a file a restore gives back whole (issue 34).

The command's JSON Lines file, read by ``monque_engine.restore.read_export`` and stored by
``import_jobs`` into an empty store, holds every job as it was: attempt history, error type
and group, owner, heartbeat interval, schedule and unique key. Its CSV has the new columns.
The export is the real command in a subprocess; the store is a real SQLite file.
"""

from __future__ import annotations

import csv
from pathlib import Path

from cli_helpers import _run
from job_samples import sample_jobs
from test_cli_fleet import cli

from monque_engine.restore import read_export


def test_a_restored_export_is_every_job_as_it_was(tmp_path: Path, db_url: str) -> None:
    jobs = sample_jobs()
    _run(db_url, lambda m: m.import_jobs(jobs))
    out = tmp_path / "all.jsonl"
    done = cli("export", "--output", str(out), "--url", db_url)
    assert done.returncode == 0, done.stderr
    restored_url = f"sqlite:///{tmp_path}/restored.db"
    with out.open(encoding="utf-8") as lines:
        restored = list(read_export(lines))
    assert _run(restored_url, lambda m: m.import_jobs(restored)) == len(jobs)
    stored = _run(restored_url, lambda m: m.get_jobs_by_id([job.id for job in jobs]))
    assert [stored[job.id] for job in jobs] == jobs  # Job equality: every field, attempts included
    again = tmp_path / "again.jsonl"
    assert cli("export", "--output", str(again), "--url", restored_url).returncode == 0
    assert again.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


def test_the_csv_export_has_error_type_error_group_and_attempts(tmp_path: Path, db_url: str) -> None:
    jobs = sample_jobs()
    _run(db_url, lambda m: m.import_jobs(jobs))
    out = tmp_path / "all.csv"
    assert cli("export", "--output", str(out), "--url", db_url).returncode == 0
    with out.open(newline="", encoding="utf-8") as handle:
        rows = {row["_id"]: row for row in csv.DictReader(handle)}
    failed = jobs[3]
    assert rows[failed.id]["errorType"] == failed.error_type and rows[failed.id]["errorGroup"] == failed.error_group
    assert [rows[job.id]["attempts"] for job in jobs] == [str(len(job.attempts)) for job in jobs]
