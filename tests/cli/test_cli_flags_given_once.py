"""A flag is spelt whole and given once (probe-cli).

argparse took any unambiguous prefix of a long flag for the flag: ``--serve … --all`` (the
bulk commands' ``--all``) was ``--allow-remote``, and the console was served on every
interface. And a flag of one value given twice kept the last without a word: ``delete
--created ..-7d --created ..now --yes`` deleted every job of the wider range. Both are usage
errors now (exit 2, one line, nothing touched). Real processes on a real SQLite file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_empty_filter_refused import refused, rows, seeded_file
from test_cli_fleet import cli

__all__ = ["seeded_file"]  # the fixture, used by name below


def test_a_prefix_of_allow_remote_does_not_serve_on_every_interface(seeded_file: Path) -> None:
    done = cli("--serve", "0.0.0.0:0", "--all", "--public-url", "http://jobs.example:8080", f"sqlite:///{seeded_file}")
    assert done.returncode == 2, done.stderr
    assert "unrecognized arguments: --all" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("prefix", ["--stat", "--ye"])
def test_a_prefix_of_a_commands_flag_is_refused(seeded_file: Path, prefix: str) -> None:
    before = rows(seeded_file)
    done = cli("delete", prefix, "failed", "--all", f"sqlite:///{seeded_file}")
    assert done.returncode == 2, done.stderr
    assert rows(seeded_file) == before


@pytest.mark.parametrize(
    ("flag", "first", "second", "hint"),
    [
        ("--created", "..-7d", "..now", ""),
        ("--status", "pending", "failed", ", with several values comma-separated"),
        ("--url", "sqlite:///elsewhere.db", None, ""),
    ],
)
def test_a_flag_of_one_value_given_twice_is_refused(
    seeded_file: Path, flag: str, first: str, second: str | None, hint: str
) -> None:
    second = second or f"sqlite:///{seeded_file}"
    line = refused(seeded_file, "delete", flag, first, f"{flag}={second}", "--yes")
    assert f"{flag} is given twice (the second would replace the first); give it once{hint}" in line, line


def test_the_console_refuses_a_repeated_flag_too(seeded_file: Path) -> None:
    done = cli("--read-only", "--log-level", "debug", "--log-level", "error", f"sqlite:///{seeded_file}")
    assert done.returncode == 2 and "--log-level is given twice" in done.stderr, done.stderr
