"""Validation: names, unique keys, payloads, run_at, options. Nothing invalid is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monque_engine import (
    InvalidCronError,
    InvalidJobIdentifierError,
    InvalidJobQueryError,
    InvalidOptionError,
    Monque,
    MonqueError,
    PayloadTooLargeError,
    PayloadValidationError,
    WorkerRegistrationError,
)
from monque_engine.validation import MAX_NAME_LENGTH, MAX_UNIQUE_KEY_LENGTH

BAD_NAMES = [
    pytest.param("", id="empty"),
    pytest.param("x" * (MAX_NAME_LENGTH + 1), id="too-long"),
    pytest.param("send email", id="space"),
    pytest.param(" lead", id="leading-space"),
    pytest.param("tab\there", id="tab"),
    pytest.param("new\nline", id="newline"),
    pytest.param("nbsp\u00a0x", id="unicode-space"),
    pytest.param("nul\x00x", id="nul"),
    pytest.param("bell\x07x", id="control"),
    pytest.param("del\x7fx", id="del"),
    pytest.param(123, id="not-a-string"),
    pytest.param(None, id="none"),
    pytest.param(["a"], id="unhashable-list"),  # was a bare TypeError from the known-names set
]


@pytest.mark.parametrize("name", BAD_NAMES)
async def test_bad_job_names_are_rejected_everywhere(monque, name):
    m = await monque()
    with pytest.raises(InvalidJobIdentifierError) as info:
        await m.enqueue(name, 1)
    assert info.value.field == "name"
    assert isinstance(info.value, MonqueError)
    with pytest.raises(InvalidJobIdentifierError):
        await m.now(name)
    with pytest.raises(InvalidJobIdentifierError):
        await m.schedule("@hourly", name)
    with pytest.raises(InvalidJobIdentifierError):
        m.register(name, lambda job: None)
    assert await m.get_jobs() == []


@pytest.mark.parametrize("name", BAD_NAMES)
async def test_bad_job_names_in_enqueue_many_are_rejected_and_nothing_is_stored(monque, name):
    m = await monque()
    await m.enqueue("ok", 0)  # the name enqueue_many's items share is already known
    with pytest.raises(InvalidJobIdentifierError) as info:
        await m.enqueue_many([{"name": "ok", "data": 1}, {"name": name, "data": 2}])
    assert info.value.field == "name"
    assert [j.data for j in await m.get_jobs()] == [0]


async def test_boundary_names_are_accepted(monque):
    m = await monque()
    for name in ("x" * MAX_NAME_LENGTH, "a", "émail.send:v2/ok-✓", "UPPER_lower-123"):
        job = await m.enqueue(name, 1)
        assert (await m.get_job(job.id)).name == name


BAD_KEYS = [
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
    pytest.param("\t", id="tab-only"),
    pytest.param("k" * (MAX_UNIQUE_KEY_LENGTH + 1), id="too-long"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("a\x7fb", id="del"),
    pytest.param(5, id="not-a-string"),
]


@pytest.mark.parametrize("key", BAD_KEYS)
async def test_bad_unique_keys_are_rejected(monque, key):
    m = await monque()
    with pytest.raises(InvalidJobIdentifierError) as info:
        await m.enqueue("ok", 1, unique_key=key)
    assert info.value.field == "uniqueKey"
    with pytest.raises(InvalidJobIdentifierError):
        await m.schedule("@daily", "ok", 1, unique_key=key)
    assert await m.get_jobs() == []


async def test_boundary_unique_keys_are_accepted(monque):
    m = await monque()
    for key in ("k" * MAX_UNIQUE_KEY_LENGTH, "with spaces inside", "ünïcode ✓"):
        job = await m.enqueue("ok", 1, unique_key=key)
        assert (await m.get_job(job.id)).unique_key == key


def _circular():
    data: dict = {"a": 1}
    data["self"] = data
    return data


class Custom:
    pass


class _Ordered(dict):
    """A dict subclass: not the exact ``dict`` the flat-payload fast path checks for."""


BAD_PAYLOADS = [
    pytest.param(float("nan"), id="nan"),
    pytest.param({"x": float("inf")}, id="inf"),
    pytest.param([float("-inf")], id="-inf"),
    pytest.param(Custom(), id="object"),
    pytest.param({"when": datetime(2030, 1, 1)}, id="datetime"),
    pytest.param({1, 2}, id="set"),
    pytest.param(b"bytes", id="bytes"),
    pytest.param(_circular(), id="circular"),
    # What BSON cannot hold is refused on both stores (issue 11 item 5)
    pytest.param(2**63, id="int-above-int64"),
    pytest.param(-(2**63) - 1, id="int-below-int64"),
    pytest.param({"deep": [1, {"n": 2**64}]}, id="nested-int-above-int64"),
    pytest.param({"k\x00ey": 1}, id="nul-in-key"),
    pytest.param([{"a": {"\x00": None}}], id="nested-nul-key"),
    # Keys JSON would turn into strings, so the job would not come back as given; the flat
    # dict is the fast path, the others take the walk (a nested or subclassed container).
    pytest.param({"a": 1, 2: "b"}, id="int-key"),
    pytest.param({"a": {None: 1}}, id="nested-none-key"),
    pytest.param({"a": [1, {1.5: 2}]}, id="key-in-list-in-dict"),
    pytest.param({"a": _Ordered({3: "x"})}, id="int-key-in-dict-subclass"),
    pytest.param(_Ordered({True: 1}), id="bool-key-top-level-subclass"),
    pytest.param((1, {4: 4}), id="key-in-tuple"),
]


async def test_payloads_with_string_keys_round_trip_through_both_enqueue_paths(monque):
    m = await monque()
    payloads = [{"a": 1, "b": "x", "c": 1.5, "d": None, "e": True}, {"n": {"m": [1, {"k": "v"}]}}, [1, "a"], {}]
    for data in payloads:
        assert (await m.get_job((await m.enqueue("ok", data)).id)).data == data
    stored = await m.enqueue_many([{"name": "ok", "data": data} for data in payloads])
    assert [(await m.get_job(job.id)).data for job in stored] == payloads


def test_int64_bounds_and_nul_in_values_are_accepted():
    from monque_engine.validation import encode_payload

    assert encode_payload([2**63 - 1, -(2**63)], None) == "[9223372036854775807,-9223372036854775808]"
    assert encode_payload({"v": "a\x00b", "$set": 1}, None) == '{"v":"a\\u0000b","$set":1}'


@pytest.mark.parametrize("data", BAD_PAYLOADS)
async def test_bad_payloads_are_rejected(monque, data):
    m = await monque()
    with pytest.raises(PayloadValidationError) as info:
        await m.enqueue("ok", data)
    assert str(info.value)
    with pytest.raises(PayloadValidationError):
        await m.enqueue_many([{"name": "ok", "data": data}])
    with pytest.raises(PayloadValidationError):
        await m.schedule("@daily", "ok", data)
    assert await m.get_jobs() == []


async def test_max_payload_size(monque):
    m = await monque(max_payload_size=200)
    small = await m.enqueue("ok", {"s": "x" * 50})
    assert small.data == {"s": "x" * 50}
    with pytest.raises(PayloadTooLargeError) as info:
        await m.enqueue("ok", {"s": "x" * 500})
    assert info.value.max_size == 200
    assert info.value.actual_size > 500
    assert "200" in str(info.value)
    with pytest.raises(PayloadTooLargeError):
        await m.enqueue_many([{"name": "ok", "data": 1}, {"name": "ok", "data": "y" * 1000}])
    assert [j.id for j in await m.get_jobs()] == [small.id]


async def test_naive_run_at_is_rejected(monque):
    m = await monque()
    with pytest.raises(InvalidJobQueryError) as info:
        await m.enqueue("ok", 1, run_at=datetime(2030, 1, 1, 12, 0))
    assert "timezone" in str(info.value)
    job = await m.enqueue("ok", 1, run_at=timedelta(seconds=1))
    with pytest.raises(InvalidJobQueryError):
        await m.reschedule_job(job.id, datetime(2030, 1, 1))
    assert len(await m.get_jobs()) == 1


@pytest.mark.parametrize(
    "run_at",
    [
        pytest.param(timedelta.max, id="timedelta.max"),
        pytest.param(timedelta.min, id="timedelta.min"),
        pytest.param(timedelta(days=3_000_000), id="past-year-9999"),
    ],
)
async def test_run_at_beyond_what_the_stores_hold_is_rejected(monque, run_at):
    m = await monque()
    with pytest.raises(InvalidJobQueryError) as info:
        await m.enqueue("ok", 1, run_at=run_at)
    assert "out of range" in str(info.value)
    job = await m.enqueue("ok", 2)
    with pytest.raises(InvalidJobQueryError):
        await m.reschedule_job(job.id, run_at)
    with pytest.raises(InvalidJobQueryError):
        await m.enqueue_many([{"name": "ok", "data": 3, "run_at": run_at}])
    assert [j.data for j in await m.get_jobs()] == [2]
    assert (await m.get_job(job.id)).next_run_at_ms == job.next_run_at_ms


async def test_the_extreme_instants_both_stores_hold_round_trip(monque):
    from datetime import UTC

    m = await monque()
    first = await m.enqueue("ok", 1, run_at=datetime(1, 1, 1, tzinfo=UTC))
    last = await m.enqueue("ok", 2, run_at=datetime.max.replace(tzinfo=UTC))
    assert (await m.get_job(first.id)).next_run_at == datetime(1, 1, 1, tzinfo=UTC)
    assert (await m.get_job(last.id)).next_run_at.year == 9999


@pytest.mark.parametrize("skip", [2**63, 2**64, -1, 1.5, True])
async def test_get_jobs_skip_out_of_range_is_a_query_error(monque, skip):
    m = await monque()
    with pytest.raises(InvalidJobQueryError, match="skip"):
        await m.get_jobs(skip=skip)


@pytest.mark.parametrize(
    "query",
    [
        "feed_interval_ms=nan",
        "feed_interval_ms=inf",
        "feed_interval_ms=-1",
        "feed_interval_ms=-inf",
        "busy_timeout=nan",
        "busy_timeout=inf",
        "busy_timeout=-1",
        "feed_retention=nan",
        "feed_retention=1e400",
    ],
)
def test_sqlite_url_parameters_must_be_finite_and_in_range(tmp_path, query):
    from monque_engine.store import InvalidStoreUrlError

    with pytest.raises(InvalidStoreUrlError) as info:
        Monque(f"sqlite:///{tmp_path}/x.db?{query}")
    assert query.split("=")[0] in str(info.value) and "\n" not in str(info.value)


async def test_invalid_cron_on_schedule_writes_nothing(monque):
    m = await monque()
    with pytest.raises(InvalidCronError):
        await m.schedule("not a cron", "ok")
    with pytest.raises(InvalidCronError):
        await m.schedule("0 9 * * *", "ok", tz="Mars/Olympus_Mons")
    assert await m.get_jobs() == []


@pytest.mark.parametrize(
    "options",
    [
        {"poll_interval": 0},
        {"poll_interval": -1},
        {"heartbeat_interval": True},
        {"max_retries": 1.5},
        {"max_payload_size": -5},
        {"shutdown_timeout": -1},
        {"stats_cache_ttl": -0.1},
        {"scheduler_instance_id": ""},
        {"stale_recovery_interval": 0},
        {"stale_recovery_interval": "5"},
        {"no_such_option": 1},
        # NaN, infinity, negative and out-of-range values (issue 9 item 10)
        {"poll_interval": float("nan")},
        {"safety_poll_interval": float("inf")},
        {"heartbeat_interval": float("inf")},
        {"lock_timeout": float("nan")},
        {"lock_timeout": 1e300},
        {"stale_recovery_interval": float("nan")},
        {"stale_recovery_interval": float("-inf")},
        {"shutdown_timeout": float("inf")},
        {"shutdown_timeout": float("nan")},
        {"base_retry_interval": -0.001},
        {"base_retry_interval": float("nan")},
        {"max_backoff_delay": float("inf")},
        {"stats_cache_ttl": float("nan")},
        {"worker_concurrency": 2**63},
        {"instance_concurrency": 2**64},
        {"max_retries": -1},
        {"max_payload_size": 2**80},
        {"job_retention": {"completed": float("nan")}},
        {"job_retention": {"failed": float("inf")}},
        {"job_retention": {"completed": 1, "interval": float("nan")}},
    ],
)
def test_invalid_options_are_rejected(tmp_path, options):
    with pytest.raises(InvalidOptionError):
        Monque(f"sqlite:///{tmp_path}/x.db", **options)


def test_invalid_option_errors_are_one_clear_line(tmp_path):
    with pytest.raises(InvalidOptionError) as info:
        Monque(f"sqlite:///{tmp_path}/x.db", heartbeat_interval=float("inf"))
    assert str(info.value).startswith("Option heartbeat_interval must be a positive number of seconds")
    assert "\n" not in str(info.value)


def test_zero_base_retry_interval_is_accepted(tmp_path):
    assert Monque(f"sqlite:///{tmp_path}/x.db", base_retry_interval=0).options.base_retry_interval == 0


async def test_register_validation(monque):
    m = await monque()
    m.register("w", lambda job: None)
    with pytest.raises(WorkerRegistrationError) as info:
        m.register("w", lambda job: None)
    assert info.value.job_name == "w"
    m.register("w", lambda job: None, replace=True)
    with pytest.raises(WorkerRegistrationError):
        m.register("c", lambda job: None, concurrency=-1)
    with pytest.raises(WorkerRegistrationError):
        m.register("c", lambda job: None, concurrency=2**63)
    with pytest.raises(WorkerRegistrationError):
        m.register("n", "not callable")  # type: ignore[arg-type]
    assert m.registered_names == ["w"]


@pytest.mark.parametrize(
    "retention",
    [
        {"completed": 60, "interval": 0},
        {"completed": 60, "interval": -1},
        {"completed": -1},
        {"failed": "1 day"},
        {"completed": True},
        {"unknown": 5},
        5,
        "1h",
    ],
)
def test_invalid_job_retention_is_rejected(tmp_path, retention):
    from monque_engine import JobRetention

    value = JobRetention(**retention) if isinstance(retention, dict) and "unknown" not in retention else retention
    with pytest.raises(InvalidOptionError):
        Monque(f"sqlite:///{tmp_path}/x.db", job_retention=value)


def test_valid_job_retention_forms(tmp_path):
    from monque_engine import JobRetention

    m = Monque(f"sqlite:///{tmp_path}/x.db", job_retention={"completed": 0, "failed": 3600})
    assert m.options.job_retention == JobRetention(completed=0, failed=3600, interval=3600.0)
    m = Monque(f"sqlite:///{tmp_path}/x.db", job_retention=JobRetention(failed=1.5, interval=0.5))
    assert m.options.job_retention.failed == 1.5


@pytest.mark.parametrize(
    "run_at",
    [
        pytest.param(datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC), id="last-ms"),
        pytest.param(datetime(2300, 6, 1, 12, 0, 0, 123000, tzinfo=UTC), id="year-2300"),
        pytest.param(datetime(1, 1, 1, 0, 0, 0, 1000, tzinfo=UTC), id="year-1"),
    ],
)
async def test_far_instants_read_back_exactly(monque, run_at):
    """A job's instants come back as stored, to the millisecond, however far from now: a
    float of seconds is off by microseconds centuries away, which truncates to the wrong ms
    when the datetime is handed back (to ``reschedule_job``, a filter, a cursor)."""
    m = await monque()
    job = await m.enqueue("far", 1, run_at=run_at)
    stored = await m.get_job(job.id)
    assert stored is not None and stored.next_run_at == run_at == job.next_run_at
