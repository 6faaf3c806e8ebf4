"""Acting on jobs, on the console's session core alone (no Textual, no Pilot): marks and
bulk plans reach exactly what the operator confirmed, never a job added or changed after
the count (issue 10 defect 2, issue 25). What the app does with a plan (the confirmation
dialog, the typed count) is UI: test_console_pilot.py, test_confirm_*.py."""

from __future__ import annotations

import time

from monque_engine import JobStatus, Monque
from monque_tui.console.actions import ActionKind
from monque_tui.console.query import JobQuery
from monque_tui.console.session.errors import ErrorGroupsModel, group_query
from monque_tui.demo.seed import SEED_JOBS, SeedJob, seed_id, seed_store

from .conftest import console_session, notices, store_jobs

PENDING_EMAIL = seed_id(1)
PENDING_EMAIL_2 = seed_id(16)
FAILED_EMAIL = seed_id(2)
WEBHOOK_FAILED = seed_id(12)  # webhook, httpx.ConnectTimeout, failed
WEBHOOK_RETRYING = seed_id(13)  # webhook, httpx.ReadTimeout, pending with 2 failures
S_NAMES = {"send-email", "sync-crm"}
S_JOBS = {job.id for job in SEED_JOBS if job.name in S_NAMES}


def _late_failure(index: int, updated_min: int) -> SeedJob:
    """Another occurrence of the webhook ConnectTimeout group (the port differs: same pattern)."""
    return SeedJob(
        index,
        "webhook",
        JobStatus.FAILED,
        1,
        updated_min=updated_min,
        fail_count=1,
        fail_reason="timed out connecting to hooks.example.com:8443",
        error_type="httpx.ConnectTimeout",
    )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


async def test_a_marked_cancel_changes_exactly_the_marked_pending_jobs(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with console_session(seeded_url) as (session, events):
        await session.load_top()
        for job_id in (PENDING_EMAIL, PENDING_EMAIL_2, FAILED_EMAIL):
            job = session.window.get(job_id)
            assert job is not None
            session.toggle_mark(job)
        plan = session.plan_for_targets(ActionKind.CANCEL)
        assert plan is not None and (plan.count, plan.skipped) == (2, 1)
        assert await session.run_plan(plan) is None
        assert "Cancelled 2 jobs; 1 was not pending and was left alone" in notices(events)
        assert session.marks == {}  # the marks were used
    after = await store_jobs(seeded_url)
    changed = {job_id for job_id in before if before[job_id] != after[job_id]}
    assert changed == {PENDING_EMAIL, PENDING_EMAIL_2}
    assert all(after[job_id].status is JobStatus.CANCELLED for job_id in changed)


async def test_retry_all_of_a_failed_view_of_one_name(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with console_session(seeded_url) as (session, events):
        session.set_query(JobQuery(status=JobStatus.FAILED, name="send-email"))
        plan = await session.plan_bulk(ActionKind.RETRY)
        assert plan is not None and plan.count == 1 and "failed job named 'send-email'" in plan.question
        assert await session.run_plan(plan) is None
        assert any(message.startswith("Retried 1 job") for message in notices(events))
    after = await store_jobs(seeded_url)
    assert {job_id for job_id in before if before[job_id] != after[job_id]} == {FAILED_EMAIL}
    assert after[FAILED_EMAIL].status is JobStatus.PENDING and after[FAILED_EMAIL].fail_count == 0


async def test_jobs_added_or_changed_after_the_count_are_left_alone(seeded_url: str) -> None:
    """The plan carries the count's place in commit order; the action reaches only what it saw."""
    async with console_session(seeded_url) as (session, events):
        plan = await session.plan_bulk(ActionKind.DELETE)
        assert plan is not None and plan.count == len(SEED_JOBS)
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            added = await other.enqueue_many([{"name": "meanwhile", "data": {"i": i}} for i in range(20)])
            # and one counted job changes meanwhile: it is no longer what was confirmed either
            changed = next(job for job in SEED_JOBS if job.status is JobStatus.PENDING)
            await other.cancel_job(changed.id)
        assert await session.run_plan(plan) is None
        said = [message for message in notices(events) if message.startswith(f"Deleted {len(SEED_JOBS) - 1:,} jobs")]
        # the count is the dialog's, taken when it opened (it once said "when you confirmed")
        assert said and f"({len(SEED_JOBS):,} were counted when you asked;" in said[0], said
    assert set(await store_jobs(seeded_url)) == {job.id for job in added} | {changed.id}


async def test_a_glob_bulk_delete_reaches_the_glob_and_never_more_than_confirmed(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with console_session(seeded_url) as (session, _):
        session.set_query(JobQuery(name="s*"))
        plan = await session.plan_bulk(ActionKind.DELETE)
        assert plan is not None and plan.count == len(S_JOBS)
        assert "with a name matching 's*'" in plan.question, plan.question
        async with Monque(seeded_url, recover_stale_jobs=False) as other:
            late = await other.enqueue("sms-late", {})  # matches, but after the count
        assert await session.run_plan(plan) is None
    after = await store_jobs(seeded_url)
    assert set(before) - set(after) == S_JOBS and late.id in after


async def test_marking_a_whole_glob_view_then_cancelling_acts_on_the_glob(seeded_url: str) -> None:
    """``A`` marks every job of the view; ``c`` then cancels by the view's filter, in one store
    operation (what the jobs screen asks with the marked view)."""
    pending = {job.id for job in SEED_JOBS if job.name in S_NAMES and job.status is JobStatus.PENDING}
    before = await store_jobs(seeded_url)
    async with console_session(seeded_url) as (session, _):
        session.set_query(JobQuery(name="s*"))
        await session.load_top()
        assert await session.mark_matching() == len(S_JOBS)
        assert session.marked_view is not None
        plan = await session.plan_bulk(ActionKind.CANCEL, session.marked_view)
        assert plan is not None and plan.count == len(pending) and plan.query.name == "s*"
        assert await session.run_plan(plan) is None
        assert session.marked_view is None  # the view's mark was used
    after = await store_jobs(seeded_url)
    changed = {job_id for job_id, job in after.items() if job.status is not before[job_id].status}
    assert changed == pending and all(after[job_id].status is JobStatus.CANCELLED for job_id in pending)


async def test_retrying_an_error_group_acts_on_what_was_confirmed_only(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, events):
        model = ErrorGroupsModel()
        await model.fetch(session.monque)
        group = next(g for g in model.groups if g.error_type == "httpx.ConnectTimeout")
        plan = await session.plan_bulk(ActionKind.RETRY, group_query(session.query, group))
        assert plan is not None and plan.count == 1
        assert "Retry 1 job: every failed or cancelled job in error group 'webhook httpx.ConnectTimeout" in (
            plan.question
        )
        # A new failure of the same group lands after the count: it was not confirmed, so it stays failed.
        late = _late_failure(200, 0)
        await seed_store(seeded_url, (late,), now_ms=_now_ms() + 1000)
        assert await session.run_plan(plan) is None
        assert any(message.startswith("Retried 1 job") for message in notices(events))
    jobs = await store_jobs(seeded_url)
    assert jobs[WEBHOOK_FAILED].status is JobStatus.PENDING and jobs[late.id].status is JobStatus.FAILED


async def test_deleting_an_error_group_leaves_a_member_committed_after_the_count(seeded_url: str) -> None:
    """Commit order, not clocks: a member whose ``updatedAt`` is older than the count (another
    worker's clock is behind, or its write waited on the lock) but which committed after the
    count was not confirmed, so the delete leaves it (it reached it until issue 25)."""
    async with console_session(seeded_url) as (session, events):
        model = ErrorGroupsModel()
        await model.fetch(session.monque)
        group = next(g for g in model.groups if g.error_type == "httpx.ConnectTimeout")
        plan = await session.plan_bulk(ActionKind.DELETE, group_query(session.query, group))
        assert plan is not None and plan.count == 1
        await seed_store(seeded_url, (_late_failure(201, 5),), now_ms=_now_ms() - 60_000)
        assert await session.run_plan(plan) is None
        assert any(message.startswith("Deleted 1 job") for message in notices(events))
    jobs = await store_jobs(seeded_url)
    assert WEBHOOK_FAILED not in jobs and seed_id(201) in jobs
    assert WEBHOOK_RETRYING in jobs  # another group of the same job name is untouched


def test_the_dialog_for_one_job_speaks_of_it_not_them() -> None:
    """ "Delete job ac0f7668 (invoice.render)? They are removed from the store." (a probe)."""
    from monque_engine import Job
    from monque_tui.console.actions import plan_for_jobs

    def job(n: int, status: JobStatus) -> Job:
        at = 1_780_000_000_000
        return Job(f"65f0{n:020x}", "invoice.render", {}, status, next_run_at_ms=at, created_at_ms=at, updated_at_ms=at)

    for kind, status in (
        (ActionKind.DELETE, JobStatus.FAILED),
        (ActionKind.CANCEL, JobStatus.PENDING),
        (ActionKind.RETRY, JobStatus.FAILED),
        (ActionKind.RESCHEDULE, JobStatus.PENDING),
    ):
        single = plan_for_jobs(kind, [job(1, status)], False)
        assert single.count == 1 and single.details[0].startswith(("It ", "Its ")), single.details
        marked = plan_for_jobs(kind, [job(1, status), job(2, status)], True)
        assert marked.details[0].startswith(("They ", "Their ")), marked.details


async def test_a_bulk_delete_the_store_stops_part_way_says_how_far_it_got(seeded_url: str) -> None:
    """``D`` on a disk that filled up part way said "Delete failed: … database or disk is
    full" while 2,000 of the jobs were already gone (a resource-exhaustion probe): SQLite
    commits a bulk action in chunks, and those stay done. The notice now says how many."""
    from monque_engine import ConnectionError

    async with console_session(seeded_url) as (session, events):
        session.set_query(JobQuery(name="s*"))
        plan = await session.plan_bulk(ActionKind.DELETE)
        assert plan is not None and plan.count == len(S_JOBS)
        monque = session.monque
        assert monque is not None
        real = monque.delete_jobs

        async def disk_fills_after_one_name(listing: object, *, as_of: object = None) -> object:
            from monque_engine import JobListFilter

            await real(JobListFilter(name="send-email"), as_of=as_of)  # the first chunk lands
            raise ConnectionError("SQLite database console.db: database or disk is full")

        monque.delete_jobs = disk_fills_after_one_name  # type: ignore[method-assign]
        assert await session.run_plan(plan) is None
        reached = sum(1 for job in SEED_JOBS if job.name == "send-email")
        said = [text for text in notices(events) if text.startswith("Delete failed")]
        assert said and said[-1].endswith(
            f"database or disk is full (at least {reached:,} of the {len(S_JOBS):,} confirmed jobs were "
            "deleted before it failed; the rest are as they were)"
        ), said
