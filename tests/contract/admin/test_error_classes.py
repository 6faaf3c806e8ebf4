"""Upstream parity: the error classes (``tests/unit/errors.test.ts``).

Upstream checks that each error keeps its message, its name and the MonqueError / Error
hierarchy, and exposes its fields. Where our constructor composes a fuller message (the
cron and identifier errors add a hint, as README's error rules ask), the test asserts the
given text is part of it.
"""

from __future__ import annotations

import pytest

from monque_engine import (
    AggregationTimeoutError,
    ConnectionError,
    InvalidCronError,
    InvalidCursorError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    JobStateError,
    MonqueError,
    PayloadTooLargeError,
    ShutdownTimeoutError,
    WorkerRegistrationError,
)

CASES = [
    ("MonqueError", lambda: MonqueError("Test message")),
    ("ConnectionError", lambda: ConnectionError("Test message")),
    ("ShutdownTimeoutError", lambda: ShutdownTimeoutError("Test message", [])),
    ("WorkerRegistrationError", lambda: WorkerRegistrationError("Test message", "job")),
    ("JobStateError", lambda: JobStateError("Test message", "id", "processing", "cancel")),
    ("InvalidCursorError", lambda: InvalidCursorError("Test message")),
    ("InvalidJobQueryError", lambda: InvalidJobQueryError("Test message")),
    ("AggregationTimeoutError", lambda: AggregationTimeoutError("Test message")),
]


@pytest.mark.parametrize(("name", "create"), CASES, ids=[c[0] for c in CASES])
def test_each_error_keeps_its_message_name_and_hierarchy(name, create):
    error = create()
    assert str(error) == "Test message"
    assert type(error).__name__ == name
    assert isinstance(error, MonqueError) and isinstance(error, Exception)


def test_composed_messages_still_carry_what_was_given():
    cron = InvalidCronError("bad cron", "Test message")
    assert "Test message" in str(cron) and "bad cron" in str(cron)
    ident = InvalidJobIdentifierError("name", "bad", "Test message")
    assert "Test message" in str(ident)
    assert isinstance(cron, MonqueError) and isinstance(ident, MonqueError)


def test_fields():
    assert InvalidCronError("60 * * * *", "Invalid").expression == "60 * * * *"
    jobs = [object(), object()]
    assert ShutdownTimeoutError("Timeout", jobs).incomplete_jobs == jobs
    assert ShutdownTimeoutError("Timeout", []).incomplete_jobs == []
    assert WorkerRegistrationError("Duplicate worker", "send-email").job_name == "send-email"
    state = JobStateError("Invalid transition", "job-123", "processing", "cancel")
    assert (state.job_id, state.current_status, state.attempted_action) == ("job-123", "processing", "cancel")
    ident = InvalidJobIdentifierError("name", "bad name", "Invalid")
    assert (ident.field, ident.value) == ("name", "bad name")
    too_large = PayloadTooLargeError(2000, 1000)
    assert (too_large.actual_size, too_large.max_size) == (2000, 1000)


def test_connection_error_chains_its_cause():
    cause = OSError("Original database error")
    try:
        raise ConnectionError("Connection failed") from cause
    except ConnectionError as error:
        assert error.__cause__ is cause


def test_aggregation_timeout_has_a_default_message():
    """Upstream: ``new AggregationTimeoutError().message`` contains 'exceeded 30 second timeout'."""
    message = str(AggregationTimeoutError())
    assert "exceeded 30 second timeout" in message
    assert "\n" not in message
