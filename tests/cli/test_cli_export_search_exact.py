"""``monque-tui export --search`` means exactly what it says (issue 25, point 3).

The id / unique-key search is the one filter text the commands take. A control character in
it (no id or unique key holds one, and SQLite's ``LIKE`` stops reading its pattern at a NUL)
exported nothing with exit 0; it is a usage error now: one line, exit 2, no file written.
Real processes on a real SQLite file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import enqueue
from test_cli_fleet import cli


@pytest.mark.parametrize("search", ["key\x01", "ab\x1bcd", "a\tb"])
def test_a_control_character_in_search_is_a_usage_error(tmp_path: Path, db_url: str, search: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    output = tmp_path / "out.jsonl"
    done = cli("export", "--search", search, "-o", str(output), db_url)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: --search "), done.stderr
    assert "control character" in lines[0] and "Traceback" not in done.stderr
    assert not output.exists()


def test_surrounding_whitespace_in_search_is_still_ignored(tmp_path: Path, db_url: str) -> None:
    job_id = enqueue(db_url, "fast", {"n": 1})
    output = tmp_path / "out.jsonl"
    done = cli("export", "--search", f" {job_id[-8:]}\n", "-o", str(output), db_url)
    assert done.returncode == 0, done.stderr
    assert job_id in output.read_text()
