"""Text search (issue 12 item 4, store side): payload or error text contains a string.

One filter for listings, counts and bulk actions, per store. ASCII case is ignored; LIKE's
wildcards in the text are literal.
"""

from __future__ import annotations

import pytest

from monque_engine import InvalidJobQueryError, JobListFilter, JobSelector, JobStatus


async def _seed(m, recorder):
    rec = recorder(m, "job:fail")

    def handler(job):
        if job.data.get("fail"):
            raise ConnectionError("SMTP relay timed out after 30 s")

    m.register("mail", handler)
    acme = await m.enqueue("mail", {"customer": "ACME Corp", "note": "100%_sure"})
    globex = await m.enqueue("mail", {"customer": "Globex"})
    failing = await m.enqueue("mail", {"customer": "Initech", "fail": True})
    await m.start()
    await rec.wait_for("job:fail")
    await m.stop()
    return acme, globex, failing


async def _ids(m, text, **filter_fields):
    page = await m.get_jobs_with_cursor(filter=JobListFilter(text=text, **filter_fields), limit=100)
    return {job.id for job in page.jobs}


async def test_text_matches_payload_and_error_text_ignoring_case(monque, recorder) -> None:
    m = await monque(max_retries=1)
    acme, globex, failing = await _seed(m, recorder)
    assert await _ids(m, "acme") == {acme.id}
    assert await _ids(m, "GLOBEX") == {globex.id}
    assert await _ids(m, "smtp relay") == {failing.id}  # failReason
    assert await _ids(m, "ConnectionError") == {failing.id}  # the error type
    assert await _ids(m, "nobody") == set()
    assert await m.count_jobs(JobListFilter(text="corp")) == 1
    assert await _ids(m, "initech", status="failed") == {failing.id}
    assert await _ids(m, "initech", status="pending") == set()


async def test_like_wildcards_in_the_text_are_literal(monque, recorder) -> None:
    m = await monque(max_retries=1)
    acme, _, _ = await _seed(m, recorder)
    assert await _ids(m, "100%_sure") == {acme.id}
    assert await _ids(m, "%") == {acme.id}
    assert await _ids(m, "_s") == {acme.id}


async def test_bulk_actions_use_the_text_filter(monque, recorder) -> None:
    m = await monque(max_retries=1)
    acme, globex, failing = await _seed(m, recorder)
    assert (await m.retry_jobs(JobSelector(text="relay"))).count == 1
    assert (await m.get_job(failing.id)).status is JobStatus.PENDING
    assert (await m.delete_jobs(JobSelector(text="globex"))).count == 1
    assert await m.get_job(globex.id) is None and await m.get_job(acme.id) is not None


async def test_empty_or_blank_text_is_refused_inner_whitespace_is_searched_and_huge_text_is_refused(monque) -> None:
    m = await monque()
    await m.enqueue("mail", {"customer": "ACME"})
    spaced = await m.enqueue("mail", {"customer": "ACME   Corp"})
    # A given filter must filter (issue 34): "" and "   " were read as "no filter", so a bulk
    # delete with an unset variable reached every job. Inner whitespace is text like any other.
    for blank in ("", "   ", " \t"):
        with pytest.raises(InvalidJobQueryError, match="text"):
            await m.count_jobs(JobListFilter(text=blank))
        with pytest.raises(InvalidJobQueryError, match="text"):
            await m.count_bulk("delete", JobSelector(text=blank))
    assert await _ids(m, "E   C") == {spaced.id}
    assert await m.count_jobs() == 2
    with pytest.raises(InvalidJobQueryError, match="search for at most 500"):
        await m.count_jobs(JobListFilter(text="x" * 501))
