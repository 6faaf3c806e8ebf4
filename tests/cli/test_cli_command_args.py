"""Probe 7: the commands' arguments as scripts write them. Real processes on real SQLite files.

* ``export --collection nosuch jobs.db`` exported 0 jobs, exit 0, and created six
  ``nosuch*`` tables in jobs.db: a read command changed the store on a typo.
* ``--collection ''`` was exit 3 ("Failed to initialize Monque"), as if the store could
  not be opened; it is a bad flag (exit 2).
* ``--connect-timeout inf`` was "internal error: OverflowError" (MongoDB), ``nan`` and
  ``-1`` were taken; the console's own flag refuses them.
* ``release-dead worker-7 --yes URL`` and ``pause NAME --collection c URL`` were
  "unrecognized arguments: URL".
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR, enqueue
from test_cli_fleet import cli


def _tables(db_url: str) -> set[str]:
    path = db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.mark.parametrize(
    "command",
    [["export"], ["paused"], ["instances"], ["health"], ["resume", "fast"], ["release-dead", "w1", "--yes"]],
)
def test_a_mistyped_collection_is_refused_and_creates_nothing(db_url: str, command: list[str]) -> None:
    enqueue(db_url, "fast", {"n": 1})
    before = _tables(db_url)
    done = cli(*command, "--collection", "monque_jbos", db_url)
    assert done.returncode == 3, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "no collection 'monque_jbos'" in line and "has monque_jobs" in line, line
    assert _tables(db_url) == before


def test_pause_into_a_new_collection_says_so(db_url: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    done = cli("pause", "fast", "--force", "--collection", "other_jobs", db_url)  # no job there uses it
    assert done.returncode == 0, done.stderr
    assert "in a new collection 'other_jobs'" in done.stderr and "has monque_jobs" in done.stderr


@pytest.mark.parametrize("name", ["", "a b", "x;drop"])
def test_a_collection_no_table_can_have_is_a_bad_flag(db_url: str, name: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    before = _tables(db_url)
    done = cli("paused", "--collection", name, db_url)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("monque-tui: error: --collection: Collection name")
    assert _tables(db_url) == before


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e300"])
@pytest.mark.parametrize("url", ["mongodb://user:s3cret@127.0.0.1:1/db", "sqlite:///jobs.db"])
def test_connect_timeout_takes_what_the_console_flag_takes(value: str, url: str) -> None:
    done = cli("instances", "--connect-timeout", value, url)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("monque-tui: error: argument --connect-timeout:"), done.stderr
    assert "s3cret" not in done.stderr and "internal error" not in done.stderr


@pytest.mark.parametrize("flags", [["instances"], []])
def test_a_huge_connect_timeout_blames_the_flag_not_the_url(flags: list[str]) -> None:
    """1e300 passed, then PyMongo refused it: "Invalid MongoDB URL …: serverSelectionTimeoutMS …"."""
    done = subprocess.run(
        [sys.executable, "-m", "monque_tui", *flags, "--connect-timeout", "1e300", "mongodb://u:s3cret@127.0.0.1:1/db"],
        cwd=CLI_DIR,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "argument --connect-timeout: '1e300'" in done.stderr and "Invalid MongoDB URL" not in done.stderr


def test_a_flag_between_the_positionals_and_the_url(tmp_path: Path, db_url: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    done = cli("release-dead", "worker-7", "--yes", db_url)
    assert done.returncode == 2 and "no instance 'worker-7' on this store" in done.stderr, done.stderr
    done = cli("pause", "fast", "--collection", "monque_jobs", db_url)
    assert (done.returncode, done.stderr.strip()) == (0, "paused fast")
    done = cli("export", "--status", "pending", "-o", str(tmp_path / "x.jsonl"), db_url, "--format", "jsonl")
    assert done.returncode == 0, done.stderr


def _cli_with_env(extra_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")} | extra_env
    return subprocess.run(
        [sys.executable, "-m", "monque_tui", *args],
        cwd=CLI_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_commands_take_monque_connect_timeout_as_the_console_does() -> None:
    """The commands read only the flag: a script that set the variable for the console still
    waited the default 5 s on an unreachable server."""
    url = "mongodb://u:s3cret@127.0.0.1:1/db"
    done = _cli_with_env({"MONQUE_CONNECT_TIMEOUT": "0.3"}, "instances", url)
    assert done.returncode == 3, done.stderr
    assert "within 0.3 s" in done.stderr and "s3cret" not in done.stderr, done.stderr
    # The flag still wins over the variable.
    done = _cli_with_env({"MONQUE_CONNECT_TIMEOUT": "9"}, "instances", "--connect-timeout", "0.2", url)
    assert "within 0.2 s" in done.stderr, done.stderr


@pytest.mark.parametrize("value", ["inf", "-1", "soon"])
def test_a_bad_monque_connect_timeout_names_the_variable(value: str, db_url: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    done = _cli_with_env({"MONQUE_CONNECT_TIMEOUT": value}, "paused", db_url)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"monque-tui: error: MONQUE_CONNECT_TIMEOUT={value!r}:"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_health_shows_a_backlog_of_hours_as_hours(db_url: str) -> None:
    """The LATENCY column read "10860.3s" for a job due three hours ago; --json keeps seconds."""
    from cli_helpers import _run

    due = datetime.now(UTC) - timedelta(hours=3, minutes=1)
    _run(db_url, lambda m: m.enqueue("late", {"n": 1}, run_at=due))
    enqueue(db_url, "fresh", {"n": 1})
    done = cli("health", db_url)
    assert done.returncode == 0, done.stderr
    rows = {line.split("\t")[0]: line.split("\t") for line in done.stdout.splitlines()[1:]}
    assert rows["late"][4].startswith("3h0"), done.stdout
    assert rows["fresh"][4].endswith("s") and float(rows["fresh"][4][:-1]) < 60, done.stdout
    as_json = {d["name"]: d for d in map(json.loads, cli("health", "--json", db_url).stdout.splitlines())}
    assert as_json["late"]["latency"] > 3 * 3600


def test_export_progress_is_the_first_page_then_one_line_a_second_then_the_last() -> None:
    """A line per 500-job page was 2,000 stderr lines for a million jobs."""
    from monque_tui.cli.commands import throttled_progress

    said: list[str] = []
    now = [100.0]
    progress = throttled_progress(said.append, clock=lambda: now[0])
    progress(0, 1_000_000)
    for written in range(500, 1_000_001, 500):
        now[0] += 0.01  # a page every 10 ms: 2,000 pages in 20 s
        progress(written, 1_000_000)
    assert said[0] == "exported 500/1000000 jobs" and said[-1] == "exported 1000000/1000000 jobs"
    assert 20 <= len(said) <= 23, len(said)
    small: list[str] = []
    throttled_progress(small.append)(900, 900)
    assert small == []  # under PROGRESS_FROM: the summary line alone
