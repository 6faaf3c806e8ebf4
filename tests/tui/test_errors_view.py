"""The errors view (`e`): groups listed, refreshed, Enter filters the jobs table, R and D act on a group
with the bulk rules ("never more than confirmed", recount and ask again), greyed out when read-only.
Real app driven by Pilot over a seeded SQLite file."""

from __future__ import annotations

import time

from monque_engine import JobStatus
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.session.errors import sparkline
from monque_tui.console.widgets.status_tabs import StatusTabs
from monque_tui.demo.seed import SEED_JOBS, SeedJob, seed_id, seed_store

from .conftest import running_console, store_jobs, table_ids, wait_for
from .toasts import said_first

WEBHOOK_FAILED = seed_id(12)  # webhook, httpx.ConnectTimeout, failed
WEBHOOK_RETRYING = seed_id(13)  # webhook, httpx.ReadTimeout, pending with 2 failures


async def _open_errors(app: object, pilot: object) -> ErrorsScreen:
    await pilot.press("e")  # type: ignore[attr-defined]
    await wait_for(lambda: isinstance(app.screen, ErrorsScreen) and app.screen.fetches > 0)  # type: ignore[attr-defined]
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, ErrorsScreen)
    return screen


async def _cursor_to(screen: ErrorsScreen, pilot: object, error_type: str) -> None:
    keys = [g.key for g in screen.model.groups]
    group = next(g for g in screen.model.groups if g.error_type == error_type)
    screen.table.move_cursor(row=keys.index(group.key))
    await pilot.pause()  # type: ignore[attr-defined]
    assert screen.cursor_group == group


def _late_failure(index: int, updated_min: int) -> SeedJob:
    """Another occurrence of the webhook ConnectTimeout group (the port differs: same pattern)."""
    return SeedJob(
        index,
        "webhook",
        JobStatus.FAILED,
        1,
        due_min=0,
        updated_min=updated_min,
        fail_count=1,
        fail_reason="timed out connecting to hooks.example.com:8443",
        error_type="httpx.ConnectTimeout",
    )


async def test_the_errors_view_lists_groups_and_keeps_the_cursor_across_refreshes(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = await _open_errors(app, pilot)
        groups = screen.model.groups
        assert {(g.name, g.error_type) for g in groups} == {
            ("send-email", "aiosmtplib.SMTPServerDisconnected"),
            ("resize-image", "PIL.UnidentifiedImageError"),
            ("webhook", "httpx.ConnectTimeout"),
            ("webhook", "httpx.ReadTimeout"),
        }
        assert screen.table.row_count == 4
        retrying = next(g for g in groups if g.error_type == "httpx.ReadTimeout")
        assert (retrying.count, retrying.retrying) == (1, 1)
        cells = [str(c) for c in screen.table.get_row(retrying.key)]
        assert cells[:5] == ["webhook", "httpx.ReadTimeout", "read timed out", "1", "1"]
        # The cursor stays on its group when a refresh brings a new, more recent group first.
        await _cursor_to(screen, pilot, "PIL.UnidentifiedImageError")
        now = time.time_ns() // 1_000_000
        fresh_job = SeedJob(
            300,
            "fresh-fail",
            JobStatus.FAILED,
            1,
            fail_count=1,
            fail_reason="order 77 is missing",
            error_type="ValueError",
        )
        before = screen.fetches
        await seed_store(seeded_url, (fresh_job,), now_ms=now)
        await wait_for(
            lambda: screen.fetches > before + 1 and any(g.name == "fresh-fail" for g in screen.model.groups), timeout=20
        )
        assert screen.table.row_count == 5
        assert screen.cursor_group is not None and screen.cursor_group.error_type == "PIL.UnidentifiedImageError"
        fresh = next(g for g in screen.model.groups if g.name == "fresh-fail")
        assert fresh.pattern == "order <n> is missing" and sum(fresh.per_minute) == 1


def test_sparkline_scales_to_the_busiest_block_and_never_hides_one_failure() -> None:
    minutes = (0,) * 57 + (1, 0, 30)
    line = sparkline(minutes, width=20)
    assert len(line) == 20 and line[:19] == "▁" * 19 and line[-1] == "█"
    assert sparkline((0,) * 59 + (1,), 60)[-1] != "▁"


async def test_enter_filters_the_jobs_table_to_the_group_and_esc_clears_it(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ConnectTimeout")
        await pilot.press("enter")
        jobs = app.jobs_screen
        await wait_for(lambda: app.screen is jobs and jobs.window.query.error_group is not None)
        assert table_ids(app) == [WEBHOOK_FAILED]
        tabs = jobs.query_one(StatusTabs)
        assert (tabs.group or "").startswith("webhook httpx.ConnectTimeout: timed out connecting")
        await wait_for(lambda: tabs.matching == 1)  # the counts honour the group too
        jobs.table.focus()
        await pilot.press("escape")
        await wait_for(lambda: jobs.window.query.error_group is None and len(table_ids(app)) == len(SEED_JOBS))


async def test_retry_group_acts_on_what_was_confirmed_only(seeded_url: str) -> None:
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ConnectTimeout")
        await pilot.press("R")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == 1
        assert (
            "Retry 1 job: every failed or cancelled job in error group 'webhook httpx.ConnectTimeout"
            in app.screen.plan.question
        )
        # A new failure of the same group lands after the count: it was not confirmed, so it stays failed.
        late = _late_failure(200, 0)
        await seed_store(seeded_url, (late,), now_ms=time.time_ns() // 1_000_000 + 1000)
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Retried 1 job"))
    jobs = await store_jobs(seeded_url)
    assert jobs[WEBHOOK_FAILED].status is JobStatus.PENDING
    assert jobs[late.id].status is JobStatus.FAILED


async def test_delete_group_leaves_a_member_committed_after_the_count_even_with_an_older_stamp(
    seeded_url: str,
) -> None:
    """Commit order, not clocks: a member whose ``updatedAt`` is older than the count (another
    worker's clock is behind, or its write waited on the lock) but which committed after the
    count was not confirmed, so the delete leaves it (it reached it until issue 25)."""
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ConnectTimeout")
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == 1
        await seed_store(seeded_url, (_late_failure(201, 5),), now_ms=time.time_ns() // 1_000_000 - 60_000)
        await pilot.press("y")
        await wait_for(lambda: said_first(app, "Deleted 1 job"))
    jobs = await store_jobs(seeded_url)
    assert WEBHOOK_FAILED not in jobs and seed_id(201) in jobs
    assert WEBHOOK_RETRYING in jobs  # another group of the same job name is untouched


async def test_group_keys_are_greyed_out_read_only_and_retry_needs_a_failed_member(seeded_url: str) -> None:
    async with running_console(seeded_url, read_only=True) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ConnectTimeout")
        assert screen.check_action("group_act", ("retry",)) is None
        assert screen.check_action("group_act", ("delete",)) is None
        assert screen.check_action("open_group", ()) is True
        await pilot.press("D")
        await pilot.pause()
        assert isinstance(app.screen, ErrorsScreen)
    async with running_console(seeded_url) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ReadTimeout")  # its only member is still retrying
        assert screen.check_action("group_act", ("retry",)) is None
        assert screen.check_action("group_act", ("delete",)) is True


async def test_the_group_commands_run_from_the_palette(seeded_url: str) -> None:
    from .test_palette import run_from_palette

    async with running_console(seeded_url) as (app, pilot):
        screen = await _open_errors(app, pilot)
        await _cursor_to(screen, pilot, "httpx.ConnectTimeout")
        for title in ("Retry group [R]", "Delete group [D]"):
            await run_from_palette(app, pilot, title)
            await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("n")
            await wait_for(lambda: app.screen is screen)
        await run_from_palette(app, pilot, "Show jobs [⏎]")
        await wait_for(lambda: app.screen is app.jobs_screen and table_ids(app) == [WEBHOOK_FAILED])
