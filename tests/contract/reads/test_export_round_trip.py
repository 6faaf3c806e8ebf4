"""A JSON Lines export carries the whole job: read back and imported, it is the same job (issue 34).

An export had no attempt history, error type or error group, so a restore through
``import_jobs`` (documented as what a restore of an export would use) lost every job's
failures and its place in the error groups. Now ``export_jobs`` → ``read_export`` →
``import_jobs`` gives back every field, on either store: the store holds jobs in every status
that real workers ran (completed, retried, failed) and imported ones (processing with an
owner and a heartbeat interval, a recurring one with a unique key), and the restore is
compared field by field, and as a second export of the restored store, byte for byte.
"""

from __future__ import annotations

import csv
import io
import json

from job_samples import oid, sample_jobs

from monque_engine import Job, JobStatus
from monque_engine.export import FIELDS, export_jobs
from monque_engine.job import STORED_SLOTS
from monque_engine.restore import read_export


async def _every_status(m, wait_until) -> list[Job]:
    """Jobs in every status: run by a real worker, then the imported samples beside them."""
    done: list[str] = []

    def flaky(job: Job) -> None:
        done.append(job.id)
        if done.count(job.id) == 1:
            raise KeyError("signing_secret")

    def broken(job: Job) -> None:
        raise ConnectionRefusedError("smtp.example.com:25 refused")

    m.register("ok", lambda job: {"sent": 1, "to": ["ada"]})  # a result (issue 38) rides along
    m.register("flaky", flaky)
    m.register("broken", broken)
    ok = await m.enqueue("ok", {"n": 1})
    retried = await m.enqueue("flaky", {"order": 42}, unique_key="order-42")
    failed = await m.enqueue("broken", {"to": "ada@example.com"})
    cancelled = await m.enqueue("email", {"n": 2}, timeout=90)  # a time limit of its own (ADR 0019)
    await m.cancel_job(cancelled.id)
    recurring = await m.schedule("0 9 * * 1", "digest", {"team": "ops"}, tz="Europe/Berlin")
    await m.start()

    async def settled() -> bool:
        jobs = await m.get_jobs_by_id([ok.id, retried.id, failed.id])
        return (
            jobs[ok.id].status is JobStatus.COMPLETED
            and jobs[retried.id].status is JobStatus.COMPLETED
            and jobs[failed.id].status is JobStatus.FAILED
        )

    await wait_until(settled, 10, "the worker's jobs to finish")
    await m.stop()
    await m.import_jobs(sample_jobs())  # after the worker: its stale recovery would take the processing one
    ids = [ok.id, retried.id, failed.id, cancelled.id, recurring.id, *(job.id for job in sample_jobs())]
    jobs = await m.get_jobs_by_id(ids)
    assert {job.status for job in jobs.values()} == set(JobStatus)
    return [jobs[job_id] for job_id in ids]


async def _export(m, fmt: str = "jsonl") -> str:
    out = io.StringIO()
    await export_jobs(m, out, None, fmt)
    return out.getvalue()


async def test_a_jsonl_export_restored_through_import_jobs_is_every_job_as_it_was(monque, wait_until) -> None:
    source = await monque(max_retries=2)
    jobs = await _every_status(source, wait_until)
    failed = next(job for job in jobs if job.name == "broken")
    assert failed.attempts and failed.error_type == "ConnectionRefusedError" and failed.error_group
    text = await _export(source)

    restored_store = await monque(collection_name="restored_jobs")
    assert await restored_store.count_jobs() == 0
    assert await restored_store.import_jobs(read_export(io.StringIO(text))) == len(jobs)
    restored = await restored_store.get_jobs_by_id([job.id for job in jobs])
    for job in jobs:
        again = restored[job.id]
        for slot in STORED_SLOTS:
            field = slot.lstrip("_")
            assert getattr(again, field) == getattr(job, field), (job.name, job.status.value, field)
    assert [a.traceback for a in restored[failed.id].attempts] == [a.traceback for a in failed.attempts]
    assert await _export(restored_store) == text  # the restored store exports the same lines
    ok = next(job for job in jobs if job.name == "ok")
    assert restored[ok.id].result == {"sent": 1, "to": ["ada"]}
    [line] = [doc for doc in map(json.loads, text.splitlines()) if doc["_id"] == ok.id]
    assert line["result"] == {"sent": 1, "to": ["ada"]}

    groups = {(group.name, group.count) for group in await restored_store.error_groups()}
    assert groups == {(group.name, group.count) for group in await source.error_groups()}


async def test_every_job_field_is_in_its_export_line(monque) -> None:
    m = await monque()
    await m.import_jobs(sample_jobs())
    lines = {doc["_id"]: doc for doc in map(json.loads, (await _export(m)).splitlines())}
    failed, processing = lines[oid(4)], lines[oid(2)]
    assert failed["errorType"] == "httpx.ConnectTimeout" and len(failed["errorGroup"]) == 16
    [attempt] = failed["attempts"]
    assert attempt == {
        "attempt": 3,
        "outcome": "failed",
        "instanceId": "worker-1:1:a",
        "startedAt": "2026-01-15T11:59:58.000Z",
        "endedAt": "2026-01-15T11:59:59.000Z",
        "durationMs": 1000,
        "errorType": "httpx.ConnectTimeout",
        "errorMessage": "timed out",
    }
    assert processing["heartbeatInterval"] == 30_000 and processing["claimedBy"] == "web-1:4121:9f3a2c"
    assert "attempts" not in processing and "errorType" not in processing  # absent, as in its document


async def test_csv_has_error_type_error_group_and_the_attempt_count(monque) -> None:
    m = await monque()
    await m.import_jobs(sample_jobs())
    rows = {row["_id"]: row for row in csv.DictReader(io.StringIO(await _export(m, "csv")))}
    assert tuple(next(iter(rows.values()))) == FIELDS
    assert FIELDS[-9:] == (
        "data",
        "errorType",
        "errorGroup",
        "attempts",
        "timeoutMs",
        "overLimitAt",
        "result",
        "stopRequestedAt",
        "progress",
    )
    failed, pending = rows[oid(4)], rows[oid(1)]
    assert (failed["errorType"], failed["attempts"]) == ("httpx.ConnectTimeout", "1")
    assert failed["errorGroup"] == sample_jobs()[3].error_group
    assert (pending["errorType"], pending["errorGroup"], pending["attempts"]) == ("", "", "0")


async def test_the_new_csv_columns_are_guarded_as_formula_cells_and_exact_with_csv_raw(monque) -> None:
    """A hand edit or another program may put anything in errorType / errorGroup."""
    m = await monque()
    hostile = sample_jobs()[3].replace(error_type='=HYPERLINK("http://x")', error_group="@SUM(A1:A9)")
    await m.import_jobs([hostile])
    for csv_raw, quote in ((False, "'"), (True, "")):
        out = io.StringIO()
        await export_jobs(m, out, None, "csv", csv_raw=csv_raw)
        [row] = csv.DictReader(io.StringIO(out.getvalue()))
        assert row["errorType"] == quote + '=HYPERLINK("http://x")' and row["errorGroup"] == quote + "@SUM(A1:A9)"
        assert row["attempts"] == "1"


async def test_csv_result_is_json_text_in_the_last_column(monque) -> None:
    m = await monque()
    await m.import_jobs([sample_jobs()[0].replace(status=JobStatus.COMPLETED, result="=done")])
    [row] = csv.DictReader(io.StringIO(await _export(m, "csv")))
    assert row["result"] == '"=done"'  # JSON text, as data: a string result is quoted, never a formula
