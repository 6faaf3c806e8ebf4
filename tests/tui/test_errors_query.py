"""The contains-text and error-group parts of a view: store forms, bulk forms, and the
predicate applied to jobs arriving on the live feed (no Textual here)."""

from __future__ import annotations

from monque_engine import Job, JobStatus
from monque_tui.console.actions import ActionKind, bulk_filter
from monque_tui.console.formatting import error_text
from monque_tui.console.query import JobQuery

NOW = 1_768_478_400_000


def _job(status: JobStatus = JobStatus.FAILED, **fields: object) -> Job:
    base: dict[str, object] = {
        "id": "678800aa0000000000000099",
        "name": "webhook",
        "data": {"url": "https://x.io"},
        "status": status,
        "next_run_at_ms": NOW,
        "created_at_ms": NOW,
        "updated_at_ms": NOW,
        "fail_count": 1,
    }
    base.update(fields)
    return Job(**base)  # type: ignore[arg-type]


def test_text_and_group_reach_the_listing_the_counts_and_the_bulk_selector() -> None:
    query = JobQuery(name="webhook", text="timed out", error_group="abc123", group_label="webhook X: y")
    listing = query.list_filter()
    assert (listing.text, listing.error_group) == ("timed out", "abc123")
    bulk = bulk_filter(ActionKind.RETRY, query)  # bulk actions apply the listing's whole filter
    assert bulk is not None and (bulk.text, bulk.error_group, bulk.name) == ("timed out", "abc123", "webhook")
    assert query.has_filter and not query.is_empty
    assert "containing 'timed out'" in query.describe() and "in error group 'webhook X: y'" in query.describe()


def test_the_feed_predicate_matches_the_store_predicate() -> None:
    in_group = JobQuery(error_group="g1")
    assert in_group.matches(_job(error_group="g1"))
    assert in_group.matches(_job(JobStatus.PENDING, error_group="g1", fail_count=2))  # retrying
    assert not in_group.matches(_job(JobStatus.PENDING, error_group="g1", fail_count=0))
    assert not in_group.matches(_job(JobStatus.COMPLETED, error_group="g1"))
    assert not in_group.matches(_job(error_group="g2"))
    text = JobQuery(text="CONNECT")
    assert text.matches(_job(error_type="httpx.ConnectTimeout"))
    assert text.matches(_job(fail_reason="could not connect"))
    assert text.matches(_job(data={"note": "connected later"}))
    assert not text.matches(_job(data=None, fail_reason="read timed out"))


def test_the_error_column_text() -> None:
    assert error_text(_job(error_type="KeyError", fail_reason="'signing_secret'")) == "KeyError: 'signing_secret'"
    # Already prefixed by its type (older data): not twice.
    assert error_text(_job(error_type="KeyError", fail_reason="KeyError: 'x'")) == "KeyError: 'x'"
    # No type on the job: the message alone. The attempt history is not read for the cell (a
    # foreign row's may be megabytes of JSON, and cells are drawn on the UI thread).
    attempts = [{"attempt": 1, "outcome": "failed", "endedAt": NOW, "errorType": "ValueError", "errorMessage": "bad"}]
    assert error_text(_job(fail_reason="bad\nmore", attempts=attempts)) == "bad"
    assert error_text(_job(fail_reason="boom")) == "boom"
