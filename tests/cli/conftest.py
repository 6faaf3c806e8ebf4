"""Fixtures for the CLI tests: spawned processes are killed at teardown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import CliProcess


@pytest.fixture
def spawn() -> Iterator[Callable[..., CliProcess]]:
    started: list[CliProcess] = []

    def start(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> CliProcess:
        process = CliProcess(list(args), env=env, cwd=cwd)
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"
