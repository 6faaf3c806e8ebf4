"""``monque-tui export --format csv``: formula cells guarded by default, ``--csv-raw`` for exact cells (issue 25).

Real ``monque-tui`` processes on a real SQLite file; the CSV read back with ``csv``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from cli_helpers import enqueue
from test_cli_fleet import cli


def _rows(text: str) -> dict[str, dict[str, str]]:
    return {row["_id"]: row for row in csv.DictReader(io.StringIO(text, newline=""))}


def test_csv_guards_formula_cells_by_default_and_csv_raw_keeps_them(tmp_path: Path, db_url: str) -> None:
    formula = enqueue(db_url, '=HYPERLINK("http://evil.example")', {"n": 1})
    number = enqueue(db_url, "numbers", -5)
    target = tmp_path / "jobs.csv"  # .csv: CSV without --format
    done = cli("export", "--output", str(target), "--url", db_url)
    assert done.returncode == 0, done.stderr
    rows = _rows(target.read_bytes().decode())
    assert rows[formula]["name"] == '\'=HYPERLINK("http://evil.example")'
    assert rows[number]["data"] == "-5"  # a plain number stays a number
    exact = cli("export", "--format", "csv", "--csv-raw", "--url", db_url)
    assert exact.returncode == 0, exact.stderr
    rows = _rows(exact.stdout)
    assert rows[formula]["name"] == '=HYPERLINK("http://evil.example")' and rows[number]["data"] == "-5"


def test_csv_raw_is_in_the_help_and_refused_for_json_lines(db_url: str) -> None:
    shown = cli("export", "--help")
    assert shown.returncode == 0 and "--csv-raw" in shown.stdout
    enqueue(db_url, "fast", {})
    done = cli("export", "--csv-raw", "--url", db_url)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "monque-tui: error: export: --csv-raw applies to CSV only, and this export is jsonl; "
        "add --format csv or drop it"
    )
    assert done.stdout == ""
