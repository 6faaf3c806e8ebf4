"""Issue 12 item 1: a failure's log line names the exception type and the message's first
line; ``--log-level debug`` adds the traceback, and the JSON line carries it as a field.
A real ``monque-tui --worker`` process, the worker app's ``boom`` handler."""

from __future__ import annotations

import signal
from collections.abc import Callable

from cli_helpers import CliProcess, enqueue, get_job

APP = "apps.worker_app:setup"


def test_json_failure_line_has_type_message_and_traceback(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = spawn("--worker", "--app", APP, "--log-format", "json", "--log-level", "debug", db_url)
    worker.wait_for_event("worker:started")
    bad = enqueue(db_url, "boom", {"why": "test"})
    fail = worker.wait_for_event("job:fail", job_id=bad)
    assert fail["error_type"] == "RuntimeError"
    assert fail["message"].endswith("RuntimeError: boom {'why': 'test'}")
    assert fail["traceback"].startswith("Traceback (most recent call last):")
    assert "in boom" in fail["traceback"] and fail["traceback"].rstrip().endswith("RuntimeError: boom {'why': 'test'}")
    worker.wait_for_event("job:traceback", job_id=bad)
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    stored = get_job(db_url, bad)
    assert stored.attempts[0].traceback == fail["traceback"]  # the log shows what the job keeps


def test_text_failure_line_is_one_line_and_debug_adds_the_traceback(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    worker = spawn("--worker", "--app", APP, db_url)
    worker.wait_for_line(r"worker started on .* as ")
    bad = enqueue(db_url, "boom", {"why": "info"})
    line = worker.wait_for_line(f"job:fail .*{bad}")
    assert "RuntimeError: boom {'why': 'info'}" in line
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    assert not any("Traceback (most recent call last)" in text for text in worker.lines)

    debug = spawn("--worker", "--app", APP, "--log-level", "debug", db_url)
    debug.wait_for_line(r"worker started on .* as ")
    other = enqueue(db_url, "boom", {"why": "debug"})
    debug.wait_for_line(f"job:traceback boom {other}")
    debug.wait_for_line("Traceback \\(most recent call last\\)")
    debug.send(signal.SIGTERM)
    assert debug.wait_exit() == 0
