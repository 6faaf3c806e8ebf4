"""``monque-tui --worker --timeout SECONDS`` / ``MONQUE_TIMEOUT`` (issue 37 part 1), as real
processes: the worker's default time limit for handlers registered without one."""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest
from cli_helpers import CliProcess, enqueue, get_job
from test_cli_worker import APP, one_line_error, start_worker


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_worker_s_timeout_cancels_a_run_over_it(spawn: Callable[..., CliProcess], db_url: str, how: str) -> None:
    if how == "flag":
        worker = start_worker(spawn, db_url, "--timeout", "0.2")
    else:
        worker = start_worker(spawn, db_url, env={"MONQUE_TIMEOUT": "0.2"})
    job_id = enqueue(db_url, "slow", {"seconds": 3600})
    worker.wait_for_event("job:fail", job_id=job_id)
    job = get_job(db_url, job_id)
    [attempt] = job.attempts
    assert (attempt.outcome, attempt.error_type) == ("timed_out", "TimeoutError")
    assert job.status == "pending" and job.fail_count == 1  # retried by the retry policy
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("0", "expected a number of seconds above 0"),
        ("-1", "expected a number of seconds above 0"),
        ("nan", "expected a finite number of seconds"),
        ("inf", "expected a finite number of seconds"),
        ("2592001", "expected at most 2592000 seconds (30 days)"),
        ("soon", "expected a number of seconds"),
    ],
)
def test_a_bad_timeout_exits_2_with_one_line(
    spawn: Callable[..., CliProcess], db_url: str, value: str, needle: str
) -> None:
    one_line_error(spawn("--worker", "--app", APP, "--timeout", value, db_url), 2, "--timeout", needle)
    one_line_error(spawn("--worker", "--app", APP, db_url, env={"MONQUE_TIMEOUT": value}), 2, "MONQUE_TIMEOUT", needle)


def test_the_cli_bound_is_the_engine_s() -> None:
    from monque_engine.timeouts import MAX_TIMEOUT_SECONDS
    from monque_tui.cli.settings import MAX_JOB_TIMEOUT

    assert MAX_JOB_TIMEOUT == MAX_TIMEOUT_SECONDS
