"""The worker's log line for ``job:error`` reads whole when the error has no text: a
MemoryError under ``ulimit -v`` logged "job:error     MemoryError: ", a line that reads as
cut off (a resource-exhaustion probe)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from monque_engine import Monque
from monque_tui.worker.job_log import JobEventLog


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (MemoryError(), "job:error     MemoryError"),
        (OSError("disk full"), "job:error     OSError: disk full"),
    ],
)
def test_a_job_error_line_never_ends_in_an_empty_colon(
    error: BaseException, line: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    log = JobEventLog(Monque(f"sqlite:///{tmp_path / 'jobs.db'}"))  # built, never opened
    with caplog.at_level(logging.ERROR, logger="monque_tui.worker"):
        log._on_error(SimpleNamespace(error=error, job=None))
    assert [record.getMessage() for record in caplog.records] == [line]
