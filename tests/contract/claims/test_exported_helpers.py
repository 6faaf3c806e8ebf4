"""Upstream parity: the helpers Node Monque exports besides the class.

``@monque/core`` exports job guards (``isPendingJob`` … ``isValidJobStatus``,
``tests/unit/guards.test.ts``), the backoff maths (``calculateBackoffDelay``,
``calculateBackoff``, ``applyJitter``, ``DEFAULT_BASE_INTERVAL``,
``tests/unit/backoff.test.ts``) and the cron helpers (``getNextCronDate``,
``validateCronExpression``, ``tests/unit/cron.test.ts``). Ours are the same functions in
snake_case; as everywhere in our API, intervals are seconds (upstream: ms), rounded to
whole milliseconds as upstream rounds. Upstream pins ``Math.random``; these tests pin
``random.random`` the same way. The guards also take a stored document (camelCase mapping).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

import monque_engine
from monque_engine import (
    DEFAULT_BASE_INTERVAL,
    DEFAULT_MAX_BACKOFF_DELAY,
    InvalidCronError,
    InvalidJobQueryError,
    JobStatus,
    MonqueError,
    apply_jitter,
    calculate_backoff,
    calculate_backoff_delay,
    get_next_cron_date,
    is_cancelled_job,
    is_completed_job,
    is_failed_job,
    is_pending_job,
    is_persisted_job,
    is_processing_job,
    is_recurring_job,
    is_valid_job_status,
    validate_cron_expression,
)

JUST_UNDER_ONE = 1 - 2**-52  # upstream's 1 - Number.EPSILON
GUARDS = {
    JobStatus.PENDING: is_pending_job,
    JobStatus.PROCESSING: is_processing_job,
    JobStatus.COMPLETED: is_completed_job,
    JobStatus.FAILED: is_failed_job,
    JobStatus.CANCELLED: is_cancelled_job,
}


@pytest.fixture
def pin_random(monkeypatch):
    def pin(value: float) -> None:
        monkeypatch.setattr(random, "random", lambda: value)

    return pin


# -- guards ------------------------------------------------------------------------------------
async def test_status_guards_are_true_for_their_status_only(monque, raw):
    """guards.test.ts: each guard is true for its status and false for every other."""
    m = await monque()
    job = await m.enqueue("guarded", {})
    for status, guard in GUARDS.items():
        await raw(m).set(job.id, status=status.value)
        stored = await m.get_job(job.id)
        assert stored is not None
        assert {s: g(stored) for s, g in GUARDS.items()} == {s: s is status for s in GUARDS}
        assert guard(stored.to_document())  # a stored document, as exported, reads the same


async def test_persisted_and_recurring_guards(monque):
    m = await monque()
    one_off = await m.enqueue("once", {})
    recurring = await m.schedule("0 * * * *", "hourly", {})
    assert is_persisted_job(one_off) and is_persisted_job(one_off.to_document())
    assert not is_persisted_job({"name": "x"}) and not is_persisted_job({"_id": None, "name": "x"})
    assert is_recurring_job(recurring) and not is_recurring_job(one_off)
    assert not is_recurring_job({"repeatInterval": None}) and not is_recurring_job({})
    # "should return true for empty string repeatInterval": defined, though no schedule.
    assert is_recurring_job({"repeatInterval": ""}) and is_recurring_job(one_off.replace(repeat_interval=""))


def test_is_valid_job_status():
    assert all(is_valid_job_status(s) and is_valid_job_status(s.value) for s in JobStatus)
    for value in ("invalid", "PENDING", "", 123, None, {}, [], True):
        assert is_valid_job_status(value) is False, value


def test_helpers_are_public_names():
    for name in ("is_pending_job", "calculate_backoff_delay", "get_next_cron_date", "validate_cron_expression"):
        assert name in monque_engine.__all__


# -- backoff -------------------------------------------------------------------------------------
def test_defaults_are_upstreams_in_seconds():
    assert DEFAULT_BASE_INTERVAL == 1.0 and DEFAULT_MAX_BACKOFF_DELAY == 86_400.0


@pytest.mark.parametrize(("delay", "factor"), [(4.0, 0), (0, 0.25), (4.0, -0.1)])
def test_apply_jitter_off_keeps_the_delay(delay, factor):
    assert apply_jitter(delay, factor) == delay


@pytest.mark.parametrize(("draw", "expected"), [(0, 7.5), (0.5, 10.0), (JUST_UNDER_ONE, 12.5)])
def test_apply_jitter_spreads_over_both_bounds(pin_random, draw, expected):
    pin_random(draw)
    assert apply_jitter(10.0, 0.25) == expected


def test_apply_jitter_clamps_at_zero_and_rounds_to_whole_ms_half_up(pin_random):
    pin_random(0)
    assert apply_jitter(0.1, 2) == 0
    assert apply_jitter(3.333, 0.25) == 2.5  # 2499.75 ms -> 2500 ms
    pin_random(JUST_UNDER_ONE)
    assert apply_jitter(3.333, 0.25) == 4.166  # 4166.25 ms -> 4166 ms


def test_calculate_backoff_delay_without_jitter():
    assert [calculate_backoff_delay(n, None, None, 0) for n in (0, 1, 2, 3, 4, 5, 10)] == [
        1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 1024.0,
    ]  # fmt: skip
    assert calculate_backoff_delay(3, 0.5, None, 0) == 4.0
    assert calculate_backoff_delay(5, 0, None, 0) == 0
    assert calculate_backoff_delay(1, 1, 60, 0) == 2.0
    assert calculate_backoff_delay(10, 1, 60, 0) == 60.0
    assert calculate_backoff_delay(20, 1, None, 0) == 86_400.0


@pytest.mark.parametrize(("draw", "default", "capped"), [(0, 6.0, 45.0), (JUST_UNDER_ONE, 10.0, 60.0)])
def test_calculate_backoff_delay_jitters_by_25_percent_and_stays_under_the_cap(pin_random, draw, default, capped):
    pin_random(draw)
    assert calculate_backoff_delay(3) == default
    assert calculate_backoff_delay(20, 1, 60, 0.25) == capped


def test_calculate_backoff_is_now_plus_the_delay(pin_random):
    pin_random(0)
    before = datetime.now(UTC)
    at = calculate_backoff(3, 2, None, 0)
    after = datetime.now(UTC)
    assert before + timedelta(seconds=16) <= at <= after + timedelta(seconds=16)
    at = calculate_backoff(3)
    assert at >= before + timedelta(seconds=6) and at <= datetime.now(UTC) + timedelta(seconds=6)


def test_calculate_backoff_delay_refuses_bad_intervals():
    for bad in (float("nan"), float("inf"), -1, "1"):
        with pytest.raises(ValueError, match="base_interval"):
            calculate_backoff_delay(1, bad)  # type: ignore[arg-type]


# -- cron ----------------------------------------------------------------------------------------
def test_get_next_cron_date():
    start = datetime(2025, 1, 1, 10, 30, 15, tzinfo=UTC)
    assert get_next_cron_date("* * * * *", start) == datetime(2025, 1, 1, 10, 31, tzinfo=UTC)
    assert get_next_cron_date("0 0 * * *", start) == datetime(2025, 1, 2, tzinfo=UTC)
    assert get_next_cron_date("@daily", start) == datetime(2025, 1, 2, tzinfo=UTC)
    assert get_next_cron_date("0 9 * * 1", start) == datetime(2025, 1, 6, 9, tzinfo=UTC)  # a Monday
    # Strictly after: a start exactly on a slot gives the next one.
    on_slot = datetime(2025, 1, 1, 10, 31, tzinfo=UTC)
    assert get_next_cron_date("* * * * *", on_slot) == datetime(2025, 1, 1, 10, 32, tzinfo=UTC)
    # Ours: an optional zone, as schedule(tz=...) takes.
    assert get_next_cron_date("0 9 * * *", start, tz="Europe/Paris") == datetime(2025, 1, 2, 8, tzinfo=UTC)
    soon = get_next_cron_date("* * * * *")
    assert datetime.now(UTC) < soon <= datetime.now(UTC) + timedelta(minutes=1)


@pytest.mark.parametrize("expression", ["invalid", "60 * * * *", "* * * * * * *", ""])
def test_invalid_expressions_raise_invalid_cron_error_with_the_expression(expression):
    for call in (lambda: validate_cron_expression(expression), lambda: get_next_cron_date(expression)):
        with pytest.raises(InvalidCronError) as caught:
            call()
        assert caught.value.expression == expression
        assert "Example" in str(caught.value)


def test_validate_accepts_what_schedule_accepts():
    for expression in ("0 9 * * 1", "*/5 * * * * *", "@hourly", "0 0 L * *"):
        assert validate_cron_expression(expression) is None


def test_a_naive_current_date_is_refused_clearly():
    with pytest.raises(InvalidJobQueryError, match="timezone-aware") as caught:
        get_next_cron_date("* * * * *", datetime(2025, 1, 1))
    assert isinstance(caught.value, MonqueError)
