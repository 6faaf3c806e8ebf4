"""Upstream parity: schedule time zones (``schedule-timezone.test.ts``).

Newer Node Monque takes ``schedule(cron, name, data, {timezone})`` and stores the zone in
its own ``timezone`` field beside a plain ``repeatInterval``. Ours has taken a zone since
the start (``tz=``), kept as a ``CRON_TZ=<zone>`` prefix of ``repeatInterval`` (README
"Cron"); ``timezone=`` is accepted as upstream's name for it and ``Job.timezone`` reads the
zone back. A job a Node producer stored with a ``timezone`` field is read (MongoDB store,
through ``Job.from_document``) as running in that zone, not in UTC.

Upstream's fake clock (``vi.setSystemTime``) has no counterpart here: the expected next run
is derived from the job's own creation time with ``get_next_cron_date``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from bson import ObjectId

from monque_engine import InvalidCronError, Job, get_next_cron_date
from monque_engine.cron import next_run_ms

BERLIN = "Europe/Berlin"


async def test_timezone_is_upstreams_name_for_tz(monque):
    """'persists the timezone and next occurrence'."""
    m = await monque()
    job = await m.schedule("0 9 * * *", "daily-report", {}, timezone=BERLIN)
    assert job.timezone == BERLIN
    assert job.next_run_at == get_next_cron_date("0 9 * * *", job.created_at, tz=BERLIN)
    local = job.next_run_at.astimezone(ZoneInfo(BERLIN))
    assert (local.hour, local.minute) == (9, 0)
    stored = await m.get_job(job.id)
    assert stored.timezone == BERLIN and stored.repeat_interval == job.repeat_interval
    same = await m.schedule("0 9 * * *", "other-report", {}, tz=BERLIN)
    assert same.repeat_interval == job.repeat_interval


async def test_a_schedule_without_a_zone_has_none(monque):
    m = await monque()
    recurring = await m.schedule("0 9 * * *", "daily-report", {})
    one_off = await m.enqueue("once", {})
    assert recurring.timezone is None and one_off.timezone is None


@pytest.mark.parametrize("zone", ["", "Not/AZone", "local", "+01:00", "-05:00"])
async def test_invalid_zones_are_refused_before_a_job_is_created(monque, zone):
    """'rejects invalid timezone before creating a job'."""
    m = await monque()
    with pytest.raises(InvalidCronError) as caught:
        await m.schedule("0 9 * * *", "daily-report", {}, timezone=zone)
    assert caught.value.expression == "0 9 * * *"
    assert await m.get_jobs() == []


async def test_tz_and_timezone_that_disagree_are_refused(monque):
    m = await monque()
    with pytest.raises(InvalidCronError, match="disagree"):
        await m.schedule("0 9 * * *", "daily-report", {}, tz=BERLIN, timezone="UTC")
    assert await m.get_jobs() == []
    job = await m.schedule("0 9 * * *", "daily-report", {}, tz=BERLIN, timezone=BERLIN)
    assert job.timezone == BERLIN


async def test_the_unique_key_keeps_the_original_schedule_and_zone(monque):
    """'keeps the original schedule and timezone when the unique key is reused'."""
    m = await monque()
    original = await m.schedule("0 9 * * *", "daily-report", {}, unique_key="daily-report", timezone=BERLIN)
    duplicate = await m.schedule(
        "0 10 * * *", "daily-report", {}, unique_key="daily-report", timezone="America/New_York"
    )
    assert duplicate == original
    assert await m.get_job(original.id) == original


def _node_document(**fields):
    now = datetime(2026, 1, 15, tzinfo=UTC)
    return {
        "_id": ObjectId(),
        "name": "daily-report",
        "data": {},
        "status": "pending",
        "nextRunAt": now,
        "failCount": 0,
        "createdAt": now,
        "updatedAt": now,
        **fields,
    }


def test_a_node_documents_timezone_field_is_honoured():
    """A newer Node producer's document: plain repeatInterval, zone in ``timezone``. Read
    without it, the schedule would run at 09:00 UTC instead of 09:00 in Berlin."""
    job = Job.from_document(_node_document(repeatInterval="0 9 * * *", timezone=BERLIN))
    assert job.timezone == BERLIN
    winter = int(datetime(2026, 1, 15, tzinfo=UTC).timestamp() * 1000)
    assert next_run_ms(job.repeat_interval, winter) == int(datetime(2026, 1, 15, 8, tzinfo=UTC).timestamp() * 1000)
    summer = int(datetime(2026, 7, 15, tzinfo=UTC).timestamp() * 1000)
    assert next_run_ms(job.repeat_interval, summer) == int(datetime(2026, 7, 15, 7, tzinfo=UTC).timestamp() * 1000)


def test_documents_without_a_usable_timezone_field_read_as_before():
    assert Job.from_document(_node_document(repeatInterval="0 9 * * *")).timezone is None
    assert Job.from_document(_node_document(repeatInterval="0 9 * * *", timezone=None)).timezone is None
    assert Job.from_document(_node_document(repeatInterval="0 9 * * *", timezone="  ")).repeat_interval == "0 9 * * *"
    one_off = Job.from_document(_node_document(timezone=BERLIN))
    assert one_off.repeat_interval is None and one_off.timezone is None
    # Our own prefix wins over a stray field: the zone the schedule was stored with.
    ours = Job.from_document(_node_document(repeatInterval=f"CRON_TZ={BERLIN} 0 9 * * *", timezone="UTC"))
    assert ours.timezone == BERLIN
