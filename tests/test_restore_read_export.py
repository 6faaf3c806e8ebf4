"""``restore.read_export``: an export's lines back as jobs, and a damaged line named (issue 34)."""

from __future__ import annotations

import pytest

from monque_engine import InvalidJobDocumentError, JobStatus
from monque_engine.restore import read_export, read_instant

LINE = (
    '{"_id":"678800aa0000000000000001","name":"email","status":"failed","nextRunAt":"2026-01-15T12:00:00.000Z",'
    '"createdAt":"2026-01-15T11:00:00.000Z","updatedAt":"2026-01-15T11:30:00.123Z","failCount":1,'
    '"failReason":"boom","data":{"n":1},"errorType":"KeyError","errorGroup":"0123456789abcdef",'
    '"attempts":[{"attempt":1,"outcome":"failed","startedAt":"2026-01-15T11:29:59.000Z",'
    '"endedAt":"2026-01-15T11:30:00.123Z","durationMs":1123,"errorType":"KeyError","errorMessage":"boom"}]}'
)


def test_a_line_reads_back_with_its_attempts_and_error_fields() -> None:
    [job] = read_export(["\n", LINE + "\n", "  \n"])
    assert job.status is JobStatus.FAILED and job.updated_at_ms == 1_768_476_600_123
    assert (job.error_type, job.error_group, job.fail_reason) == ("KeyError", "0123456789abcdef", "boom")
    [attempt] = job.attempts
    assert (attempt.started_at_ms, attempt.ended_at_ms, attempt.duration_ms) == (
        1_768_476_599_000,
        1_768_476_600_123,
        1123,
    )


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ({"$date": {"$numberLong": "253402300800000"}}, 253_402_300_800_000),  # the export's form past 9999
        ({"$date": {"$numberLong": "-62135596800001"}}, -62_135_596_800_001),
        ({"$date": 1_000}, 1_000),
        ({"$date": "1970-01-01T00:00:01.000Z"}, 1_000),
        ("1970-01-01T00:00:01.000Z", 1_000),
    ],
)
def test_instants_in_every_form_the_export_or_mongoexport_writes(value: object, ms: int) -> None:
    assert read_instant(value) == ms


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("{not json", "Export line 2 is not a readable Monque job: it is not JSON ("),
        ("[1, 2]", "Export line 2 is not a readable Monque job: it is a JSON list, not an object;"),
        (
            LINE.replace('"failed"', '"done"'),
            "Export line 2 (job 678800aa0000000000000001) is not a readable Monque job: "
            "status is not a Monque status ('done'); fix that line or leave it out",
        ),
        (
            LINE.replace('"2026-01-15T12:00:00.000Z"', '"soon"'),
            "(job 678800aa0000000000000001) is not a readable Monque job: nextRunAt is not a date",
        ),
    ],
)
def test_a_damaged_line_is_refused_naming_it(line: str, said: str) -> None:
    with pytest.raises(InvalidJobDocumentError) as info:
        list(read_export([LINE, line]))
    assert said in str(info.value) and info.value.line == 2, str(info.value)
