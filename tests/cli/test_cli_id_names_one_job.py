"""``--id`` names one job: an action whose ``--id`` matches several is refused.

``monque-tui delete --id 6b1 --yes`` deleted every job whose id starts ``6b1``: an ObjectId
starts with its creation time, so a short start reaches every job made in the same weeks,
and ``--yes`` skipped the count that would have shown it. ``--id`` and ``--search`` were one
flag. Now ``--id`` is one job (``cancel``, ``retry`` and ``delete`` refuse an ``--id`` that
matches more than one, exit 2, the store untouched), and ``--search`` is the flag for every
job that matches. Real processes on a real SQLite file (rows read with sqlite3).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_cli_empty_filter_refused import refused, rows, seeded_file
from test_cli_fleet import cli

from monque_tui.demo.seed import SEED_JOBS

__all__ = ["seeded_file"]  # the fixture, used by name below

#: The start every seeded id shares (``demo.seed.seed_id``): it matches every seeded job.
SHARED_START = "678800aa"


@pytest.mark.parametrize("action", ["delete", "cancel", "retry"])
def test_an_id_that_matches_several_jobs_is_refused_whatever_yes_says(seeded_file: Path, action: str) -> None:
    line = refused(seeded_file, action, "--id", SHARED_START, "--yes")
    assert f"--id '{SHARED_START}' matches {len(SEED_JOBS):,} jobs" in line, line
    assert f"--search '{SHARED_START}'" in line, line  # says what to use instead


def test_cancel_running_refuses_it_too(seeded_file: Path) -> None:
    assert "--id names one job" in refused(seeded_file, "cancel", "--id", SHARED_START, "--running", "--yes")


def test_a_whole_id_reaches_that_job_alone(seeded_file: Path) -> None:
    before = rows(seeded_file)
    target = str(before[0][0])
    done = cli("delete", "--id", target, "--yes", "--url", f"sqlite:///{seeded_file}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1" and "deleted 1 of 1 counted job(s)" in done.stderr
    assert [row[0] for row in rows(seeded_file)] == [row[0] for row in before[1:]]


def test_an_id_start_that_names_one_job_is_enough(seeded_file: Path) -> None:
    before = rows(seeded_file)
    target = str(before[-1][0])
    ids = [str(row[0]) for row in before]
    start = next(target[:n] for n in range(1, 25) if sum(i.startswith(target[:n]) for i in ids) == 1)
    assert len(start) < len(target)  # a start, not the whole id
    counted = cli("delete", "--id", start, "--url", f"sqlite:///{seeded_file}")
    assert counted.returncode == 0 and counted.stdout.strip() == "1", counted.stderr
    assert rows(seeded_file) == before  # without --yes: counted, nothing changed


def test_search_still_reaches_every_match(seeded_file: Path) -> None:
    counted = cli("delete", "--search", SHARED_START, "--url", f"sqlite:///{seeded_file}")
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.strip() == str(len(SEED_JOBS))  # counted: every seeded job matches
    done = cli("delete", "--search", SHARED_START, "--yes", "--url", f"sqlite:///{seeded_file}")
    assert done.returncode == 0, done.stderr
    assert rows(seeded_file) == []


def test_id_and_search_together_are_refused(seeded_file: Path) -> None:
    line = refused(seeded_file, "delete", "--id", SHARED_START, "--search", "x", "--yes")
    assert "--search" in line and "--id" in line, line


def test_a_read_lists_every_match_of_an_id_start(seeded_file: Path) -> None:
    done = cli("export", "--id", SHARED_START, "--url", f"sqlite:///{seeded_file}")
    assert done.returncode == 0, done.stderr
    assert len([json.loads(line) for line in done.stdout.splitlines()]) == len(SEED_JOBS)
    assert os.path.exists(seeded_file)
