"""A name glob in the filter bar (issue 10, item 12): ``s*`` shows every matching name, says
what it matched, and bulk actions apply the same glob, never more than confirmed."""

from __future__ import annotations

from textual.widgets import Static

from monque_engine import Monque
from monque_tui.console.query import JobQuery
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar
from monque_tui.demo.seed import SEED_JOBS

from .conftest import running_console, store_jobs, table_ids, wait_for
from .test_confirm_width import screen_text
from .toasts import said_first

S_NAMES = {"send-email", "sync-crm"}
S_JOBS = {job.id for job in SEED_JOBS if job.name in S_NAMES}


def test_a_name_with_a_wildcard_is_a_glob_and_a_plain_name_stays_exact() -> None:
    glob, exact = JobQuery(name="s*"), JobQuery(name="send")
    assert glob.list_filter().name_pattern == "s*" and glob.list_filter().name is None
    assert exact.list_filter().name == "send" and exact.list_filter().name_pattern is None
    assert glob.name_matches("sync-crm") and not glob.name_matches("webhook")
    assert not exact.name_matches("send-email")
    assert JobQuery(name="report-?").name_matches("report-1") and not JobQuery(name="report-?").name_matches(
        "report-10"
    )
    assert "names 's*'" in glob.describe()


async def test_the_glob_filters_the_table_and_says_what_it_matched(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await wait_for(lambda: screen.session.names != [])
        await pilot.press("slash", "s", "asterisk")
        await wait_for(lambda: set(table_ids(app)) == S_JOBS)
        await wait_for(lambda: "→ 2 names" in screen_text(app))
        hint = str(screen.query_one("#filter-hint", Static).render())
        assert "name s* → 2 names: send-email, sync-crm" in hint, hint
        await wait_for(lambda: screen.session.stats is not None and screen.session.stats.total == len(S_JOBS))
        # Without a wildcard the name is exact: "send" names no job.
        await pilot.press("backspace", "backspace", *"send")
        await wait_for(lambda: screen.session.query.name == "send" and screen.window.query.name == "send")
        await wait_for(lambda: table_ids(app) == [])
        assert "→" not in str(screen.query_one("#filter-hint", Static).render())


async def test_live_jobs_are_placed_by_the_glob(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        await pilot.press("slash", "s", "asterisk", "enter", "escape")
        await wait_for(lambda: set(table_ids(app)) == S_JOBS)
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            inside = await other.enqueue("sms-out", {})
            outside = await other.enqueue("webhook", {})
        finally:
            await other.close()
        await wait_for(lambda: inside.id in table_ids(app))
        assert outside.id not in table_ids(app)


async def test_bulk_delete_applies_the_glob_and_never_more_than_confirmed(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("slash", "s", "asterisk", "enter", "escape")
        await wait_for(lambda: set(table_ids(app)) == S_JOBS)
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        plan = app.screen.plan  # type: ignore[attr-defined]
        assert plan.count == len(S_JOBS) and "with a name matching 's*'" in plan.question, plan.question
        # A matching job added while the question is on screen is not part of what was confirmed.
        other = Monque(seeded_url, recover_stale_jobs=False)
        await other.initialize()
        try:
            late = await other.enqueue("sms-late", {})
        finally:
            await other.close()
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Deleted"))
        assert app.jobs_screen.query_one(FilterBar).name_matches is not None
    after = await store_jobs(seeded_url)
    assert set(before) - set(after) == S_JOBS
    assert late.id in after


async def test_mark_all_matching_then_cancel_uses_the_glob(seeded_url: str) -> None:
    """``A`` marks every job of the view; ``c`` then cancels by the same glob, in one store operation."""
    from monque_engine import JobStatus

    pending = {job.id for job in SEED_JOBS if job.name in S_NAMES and job.status is JobStatus.PENDING}
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("slash", "s", "asterisk", "enter", "escape")
        await wait_for(lambda: set(table_ids(app)) == S_JOBS)
        await pilot.press("A")
        await wait_for(lambda: app.jobs_screen.session.marked_view is not None)
        await pilot.press("c")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        plan = app.screen.plan  # type: ignore[attr-defined]
        assert plan.count == len(pending) and plan.query.name == "s*"
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Cancelled"))
    after = await store_jobs(seeded_url)
    changed = {job_id for job_id, job in after.items() if job.status is not before[job_id].status}
    assert changed == pending and all(after[job_id].status is JobStatus.CANCELLED for job_id in pending)


def test_an_empty_view_says_when_its_name_names_no_job() -> None:
    known = ["send-email", "sync-crm", "webhook"]
    assert JobQuery(name="send-email").unknown_name_hint(known) is None  # known: an empty queue
    assert JobQuery(name="s*").unknown_name_hint(known) is None  # a glob says "→ 0 names" itself
    assert JobQuery(name="send").unknown_name_hint([]) is None  # names not read yet
    prefix = JobQuery(name="send").unknown_name_hint(known)
    assert prefix is not None and "No job is named 'send'" in prefix
    assert "send-email" in prefix and "send*" in prefix and "sync-crm" not in prefix
    assert "send-email" in (JobQuery(name="SEND").unknown_name_hint(known) or "")  # names are case-sensitive
    typo = JobQuery(name="wbhook").unknown_name_hint(known)
    assert typo is not None and "in this store" in typo and "Tab" in typo
    many = JobQuery(name="r").unknown_name_hint([f"report-{i}" for i in range(5)])
    assert many is not None and "report-0, report-1, report-2 and 2 more" in many


async def test_the_empty_table_says_the_typed_name_is_not_a_job_name(seeded_url: str) -> None:
    """Typing ``send`` and Enter, with ``send-email`` offered, gave "No jobs match this view"."""
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await wait_for(lambda: screen.session.names != [])
        await pilot.press("slash", *"send", "enter")
        await wait_for(lambda: screen.window.query.name == "send" and table_ids(app) == [])
        await wait_for(lambda: "No job is named 'send'; names starting with it: send-email" in screen_text(app))
        await pilot.press("slash", "ctrl+u", *"send-email", "enter")  # a real name: its rows
        await wait_for(lambda: table_ids(app) != [] and screen.window.query.name == "send-email")


async def test_a_name_added_after_the_console_opened_is_not_called_unknown(seeded_url: str) -> None:
    """The store's names are read once, at start: a name a producer began using later, with
    none of its jobs in the tab shown, was called "not a job in this store". The view's own
    count of the name (read on every view change) decides instead."""
    async with running_console(seeded_url) as (app, pilot):
        screen = app.jobs_screen
        await wait_for(lambda: screen.session.names != [])
        producer = Monque(seeded_url, recover_stale_jobs=False)
        await producer.initialize()
        try:
            await producer.enqueue("brand-new-report", {"n": 1})  # pending only
        finally:
            await producer.close()
        await pilot.press("5", "slash", *"brand-new-report", "enter")  # failed ones: none
        await wait_for(lambda: screen.window.query.name == "brand-new-report" and table_ids(app) == [])
        await wait_for(lambda: screen.session.stats is not None and screen.session.stats.total == 1)
        await wait_for(lambda: "No jobs match this view." in screen_text(app))
        assert "No job is named" not in screen_text(app)
        assert "brand-new-report" not in screen.session.names  # no extra read of every name


def test_the_hint_offers_tab_and_a_glob_only_where_they_work() -> None:
    """Names, Tab completion and globs are all case-sensitive: for ``SEND`` the hint listed
    ``send-email`` and said "SEND* shows all", a glob that shows nothing, and Tab, which
    completes nothing from ``SEND``."""
    known = ["SEND-sms", "send-email", "webhook"]
    other_case = JobQuery(name="Send").unknown_name_hint(known)
    assert other_case is not None and "send-email" in other_case and "SEND-sms" in other_case
    assert "Send*" not in other_case and "Tab" not in other_case and "case" in other_case
    mixed = JobQuery(name="send").unknown_name_hint(known)
    assert mixed is not None and "names starting with it: send-email (" in mixed and "send* shows all" in mixed
    assert "SEND-sms" not in mixed  # send* would not show it
