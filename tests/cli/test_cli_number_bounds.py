"""Numbers past what the program can do are refused at the flag, naming the flag (probe-cli).

``--worker --processes 99999999999`` set up a slot per process before starting any and grew
the supervisor to the machine's whole memory until the kernel killed it (exit 137, other
processes at risk). ``--concurrency 2147483648`` and ``--poll-interval 1e300`` reached the
engine, whose refusal named its own option ("Option worker_concurrency must be ..."), which
no flag or variable is called. Each is now a one-line usage error (exit 2) naming the flag
or the environment variable, and the store is never opened.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR

from monque_engine.options import MAX_COUNT as ENGINE_MAX_COUNT
from monque_engine.options import MAX_SECONDS as ENGINE_MAX_SECONDS
from monque_tui.cli.settings import MAX_COUNT, MAX_PROCESSES, MAX_SECONDS

#: Address space of the child: on the old code ``--processes 99999999999`` then fails with a
#: MemoryError in a second instead of taking the machine's memory.
CHILD_MEMORY = 1 << 30


def _limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "monque_tui", *args],
        cwd=CLI_DIR,
        env=full_env,
        text=True,
        capture_output=True,
        timeout=60,
        preexec_fn=_limited_memory,
    )


def assert_usage_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_the_bounds_are_the_engines() -> None:
    assert MAX_COUNT == ENGINE_MAX_COUNT
    assert MAX_SECONDS == ENGINE_MAX_SECONDS


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (
            ["--processes", "99999999999"],
            f"--processes: '99999999999': expected a whole number from 1 to {MAX_PROCESSES}",
        ),
        (["--processes", str(MAX_PROCESSES + 1)], f"from 1 to {MAX_PROCESSES}, or auto"),
        (["--concurrency", str(MAX_COUNT + 1)], f"--concurrency: '{MAX_COUNT + 1}': expected a whole number from 1"),
        (["--poll-interval", "1e300"], "--poll-interval: '1e300': expected at most 1,000,000,000 seconds"),
        (["--lock-timeout", "2e9"], "--lock-timeout: '2e9': expected at most"),
        (["--shutdown-timeout", "1e10"], "--shutdown-timeout: '1e10': expected at most"),
    ],
)
def test_a_number_past_the_bound_names_its_flag(tmp_path: Path, flags: list[str], needle: str) -> None:
    store = tmp_path / "jobs.db"
    done = run(["--worker", "--app", "apps.worker_app:setup", *flags, f"sqlite:///{store}"])
    assert_usage_error(done, needle)
    assert not store.exists()  # refused before the store was opened (or created)


def test_the_environment_is_bounded_the_same_way(tmp_path: Path) -> None:
    store = tmp_path / "jobs.db"
    done = run(["--worker", "--app", "apps.worker_app:setup", f"sqlite:///{store}"], env={"MONQUE_PROCESSES": "100000"})
    assert_usage_error(done, "MONQUE_PROCESSES='100000'", f"from 1 to {MAX_PROCESSES}")
    done = run(
        ["--worker", "--app", "apps.worker_app:setup", f"sqlite:///{store}"], env={"MONQUE_CONCURRENCY": "9" * 12}
    )
    assert_usage_error(done, "MONQUE_CONCURRENCY=", f"from 1 to {MAX_COUNT}")
    assert not store.exists()
