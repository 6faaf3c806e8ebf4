"""A word in the store URL's place that is no URL is named, not the URL after it (probe-cli).

``export failed sqlite:///jobs.db`` read "unrecognized arguments: sqlite:///jobs.db",
blaming the one right word (argparse had filled the URL slot with ``failed``);
``delete bulk.0 --yes`` with MONQUE_URL set read "Store URL 'bulk.0' has no scheme". A bare
file path there still gets the ``sqlite:///`` suggestion. Real processes; nothing opened.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    full_env.update(env or {})
    command = [sys.executable, "-m", "monque_tui", *args]
    return subprocess.run(command, cwd=CLI_DIR, env=full_env, text=True, capture_output=True, timeout=60)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("words", "needle"),
    [
        (["export", "failed"], "export: unexpected argument 'failed': a filter is a flag, e.g. --status failed"),
        (["delete", "bulk.0", "--yes"], "delete: unexpected argument 'bulk.0': a filter is a flag, e.g. --name bulk.0"),
        (["health", "30"], "health: unexpected argument '30': it takes monque-tui health [--window MINUTES]"),
        (
            ["release-dead", "a", "b"],
            "release-dead: unexpected argument 'b': it takes monque-tui release-dead INSTANCE",
        ),
        (["repair-counts", "extra"], "repair-counts: unexpected argument 'extra'"),
    ],
)
def test_a_stray_word_before_the_url_is_named(tmp_path: Path, words: list[str], needle: str) -> None:
    store = tmp_path / "jobs.db"
    line = one_line(run(*words, f"sqlite:///{store}"))
    assert needle in line, line
    assert not store.exists()


def test_a_stray_word_with_the_url_in_the_environment_is_named(tmp_path: Path) -> None:
    store = tmp_path / "jobs.db"
    line = one_line(run("delete", "bulk.0", "--yes", env={"MONQUE_URL": f"sqlite:///{store}"}))
    assert "unexpected argument 'bulk.0'" in line and "--name bulk.0" in line, line
    line = one_line(run("pause", "a", "b", "--url", f"sqlite:///{store}"))
    assert "unexpected argument 'b'" in line, line
    assert not store.exists()


def test_a_bare_path_in_the_urls_place_still_gets_the_sqlite_hint() -> None:
    line = one_line(run("export", "jobs.db"))
    assert "did you mean sqlite:///jobs.db?" in line, line
    line = one_line(run("paused", "--bogus", "sqlite:///jobs.db"))
    assert "unrecognized arguments: --bogus" in line, line
