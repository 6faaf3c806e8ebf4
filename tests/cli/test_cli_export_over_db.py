"""``export --output`` never replaces a SQLite database, the store's own file included (probe finding).

An export replaces an existing file whole (a previous export, by design), so
``monque-tui export --output jobs.db --url sqlite:///jobs.db`` replaced the store it had just
read with JSON Lines: every job lost, and the next command said "jobs.db is not a SQLite
database". Now it is one line naming the fix, exit 2, and the database untouched. Real
processes on a real SQLite file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cli_helpers import enqueue, get_job
from test_cli_fleet import cli


def test_export_refuses_to_replace_the_store_and_its_companions(tmp_path: Path, db_url: str) -> None:
    job_id = enqueue(db_url, "fast", {"n": 1})
    store = tmp_path / "jobs.db"
    assert store.exists()
    before = store.read_bytes()
    for target in (store, tmp_path / "jobs.db-wal", tmp_path / "jobs.db-journal"):
        done = cli("export", "--output", str(target), "--url", db_url)
        assert done.returncode == 2, done.stderr
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in line, line
        assert f"refusing to write the export over {target}" in line and "name another file" in line, line
    assert store.read_bytes()[:16] == before[:16] == b"SQLite format 3\x00"
    assert get_job(db_url, job_id).status == "pending"  # the store still reads
    # Another application's database is refused too; an earlier export is still replaced.
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    assert cli("export", "--output", str(other), "--url", db_url).returncode == 2
    previous = tmp_path / "export.jsonl"
    previous.write_text("yesterday\n")
    assert cli("export", "--output", str(previous), "--url", db_url).returncode == 0
    assert '"fast"' in previous.read_text()


def test_export_with_a_reversed_date_range_says_so_instead_of_exporting_nothing(db_url: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    done = cli("export", "--url", db_url, "--updated-from", "2026-12-03", "--updated-to", "2026-12-01")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    # Read by the console filter bar's parser (issue 28): its words for a reversed range.
    assert len(line.splitlines()) == 1 and line.startswith("monque-tui: error: --updated-from/--updated-to")
    assert "ends before it starts (2026-12-03..2026-12-01)" in line
    assert done.stdout == ""


def test_export_of_a_name_no_job_can_have_says_why(db_url: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    done = cli("export", "--url", db_url, "--name", "fast job")
    assert done.returncode == 2, done.stderr
    assert "--name: Invalid job name 'fast job': must not contain whitespace" in done.stderr.strip()
    assert done.stdout == ""
