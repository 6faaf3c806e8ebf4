"""A filter flag that is given must filter (issue 34, section 1 and 4, and the glob item).

``monque-tui delete --contains "" --yes`` printed ``deleted 5 of 5 counted job(s) (all)``: an
empty or blank value was read as no filter, so a deploy script whose ``$PATTERN`` came out
empty emptied the queue. So did ``--id ""``, ``--search ""``, ``--id " "``, ``--id $'\\t'``,
``--name '*'`` and ``--error-group ''``, on ``cancel`` too. Each is now exit 2 with one line
naming the flag, and the store file is untouched (its rows read with sqlite3, not through
the engine). An instant whose offset carries it past the years 1-9999 ended with ``internal
error: OverflowError`` (exit 1), and a glob with a control character printed its "(a glob)
matches 0 job name(s)" line before the error. Real processes on a real SQLite file.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from test_cli_fleet import cli

from monque_tui.demo.seed import SEED_JOBS, seed_store


@pytest.fixture
def seeded_file(tmp_path: Path) -> Path:
    """A seeded store for each test (one test's fault cannot hide another's): left as it is."""
    path = tmp_path / "jobs.db"
    asyncio.run(seed_store(f"sqlite:///{path}"))
    return path


def rows(path: Path) -> list[tuple[object, ...]]:
    """Every job row as stored (id, status, updated instant), read straight from the file."""
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT id, status, updated_at FROM monque_jobs ORDER BY id").fetchall()


def refused(path: Path, *args: str) -> str:
    """Run a command that must be refused: exit 2, one line, no traceback, the store as it was."""
    before = rows(path)
    assert len(before) == len(SEED_JOBS)
    done = cli(*args, "--url", f"sqlite:///{path}")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (args, done.returncode, done.stderr, done.stdout)
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: "), (args, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert done.stdout == ""
    assert rows(path) == before
    return lines[0]


BLANK_FLAGS = [
    (("--contains", ""), "--contains"),
    (("--id", ""), "--id"),
    (("--search", ""), "--search"),
    (("--id", " "), "--id"),
    (("--id", "\t"), "--id"),
    (("--contains", " "), "--contains"),
    (("--name", " "), "--name"),
    (("--error-group", ""), "--error-group"),
    (("--when", ""), "--when"),
    (("--created-from", ""), "--created-from"),
]


@pytest.mark.parametrize("action", ["delete", "cancel"])
@pytest.mark.parametrize(("flags", "named"), BLANK_FLAGS, ids=[repr(flags[1]) + flags[0] for flags, _ in BLANK_FLAGS])
def test_an_empty_or_blank_filter_value_is_refused(
    seeded_file: Path, action: str, flags: tuple[str, str], named: str
) -> None:
    line = refused(seeded_file, action, *flags, "--yes")
    assert named in line, line


def test_retry_and_export_refuse_an_empty_value_too(seeded_file: Path) -> None:
    assert "--contains" in refused(seeded_file, "retry", "--contains", "", "--yes")
    assert "--id" in refused(seeded_file, "export", "--id", "")


@pytest.mark.parametrize("pattern", ["*", "**", "?*"])
def test_a_glob_every_name_matches_is_no_filter(seeded_file: Path, pattern: str) -> None:
    line = refused(seeded_file, "delete", "--name", pattern, "--yes")
    assert "every job" in line and "--all" in line, line


@pytest.mark.parametrize(("flag", "value"), [("--error-group", ""), ("--when", ""), ("--when", " ")])
def test_an_empty_value_beside_a_status_is_refused_not_dropped(seeded_file: Path, flag: str, value: str) -> None:
    """``cli/filter.py`` tested these by truthiness: the flag was dropped and every pending job cancelled."""
    line = refused(seeded_file, "cancel", "--status", "pending", flag, value, "--yes")
    assert flag in line, line


@pytest.mark.parametrize("action", ["delete", "cancel", "export"])
@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+05:00..", "..9999-12-31T23:59:59-05:00"])
def test_an_offset_instant_past_the_calendar_is_a_usage_error(seeded_file: Path, action: str, value: str) -> None:
    line = refused(seeded_file, action, "--created", value, *(["--yes"] if action != "export" else []))
    assert "out of range" in line and "9999-12-31" in line, line


@pytest.mark.parametrize("flag", ["--updated-from", "--next-run-to"])
def test_the_other_times_are_checked_the_same_way(seeded_file: Path, flag: str) -> None:
    value = "0001-01-01T00:00:00+00:01" if flag.endswith("from") else "9999-12-31T23:59:59.999-00:01"
    assert "out of range" in refused(seeded_file, "delete", flag, value, "--yes")


@pytest.mark.parametrize("action", ["export", "delete"])
def test_a_glob_with_a_control_character_prints_the_error_alone(seeded_file: Path, action: str) -> None:
    line = refused(seeded_file, action, "--name", "send-*\x01", *(["--yes"] if action != "export" else []))
    assert "control character" in line and "--name" in line, line


def test_a_filter_that_filters_still_acts_and_all_still_means_every_job(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    asyncio.run(seed_store(f"sqlite:///{path}"))
    url = f"sqlite:///{path}"
    email = sum(1 for job in SEED_JOBS if job.name == "send-email")
    done = cli("delete", "--name", "send-*", "--yes", "--url", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(email) and len(rows(path)) == len(SEED_JOBS) - email
    done = cli("delete", "--name", "*", "--all", "--yes", "--url", url)
    assert done.returncode == 0, done.stderr
    assert rows(path) == []


def test_every_status_named_is_no_filter_either(seeded_file: Path) -> None:
    line = refused(seeded_file, "delete", "--status", "pending,processing,completed,failed,cancelled", "--yes")
    assert "--status names every status" in line and "--all" in line, line
