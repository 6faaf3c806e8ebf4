"""A store URL given empty is refused, not read as "no URL" (probe-cli).

``monque-tui delete --all --yes "$DB_URL"`` with the variable unset passed ``""``, which was
read as unset and fell back to ``sqlite:///monque.db`` in the working directory: the
delete reached whatever that file held, and ``--worker`` started on a new empty file there.
Real processes, run in a folder holding a ``monque.db`` with jobs; an empty MONQUE_URL
still means unset.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR, enqueue, jobs


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLI_DIR), full_env.get("PYTHONPATH")]))
    full_env.update(env or {})
    command = [sys.executable, "-m", "monque_tui", *args]
    return subprocess.run(command, cwd=cwd, env=full_env, text=True, capture_output=True, timeout=60)


@pytest.mark.parametrize(
    "words",
    [
        ["delete", "--all", "--yes", ""],
        ["delete", "--all", "--yes", "--url", " "],
        ["export", ""],
        ["--worker", "--app", "apps.worker_app:setup", "--duration", "1", ""],
    ],
)
def test_an_empty_url_is_refused_and_the_default_file_untouched(tmp_path: Path, words: list[str]) -> None:
    default = tmp_path / "monque.db"
    url = f"sqlite:///{default}"
    kept = {enqueue(url, "fast", {"n": n}) for n in range(3)}
    before = default.stat().st_mtime_ns
    done = run(tmp_path, *words)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "given is empty (an unset shell variable?)" in lines[0], done.stderr
    assert {job.id for job in jobs(url)} == kept
    assert default.stat().st_mtime_ns == before


def test_an_empty_monque_url_still_means_the_default(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'monque.db'}"
    job_id = enqueue(url, "fast", {"n": 1})
    done = run(tmp_path, "export", env={"MONQUE_URL": ""})
    assert done.returncode == 0, done.stderr
    assert job_id in done.stdout
