"""The errors view (`e`): groups listed, refreshed, Enter filters the jobs table, R and D ask about a
group (from keys and the palette), greyed out when read-only. Real app driven by Pilot over a seeded
SQLite file. What a group's bulk action reaches ("never more than confirmed", by commit order) is the
session's: test_session_actions.py."""

from __future__ import annotations

import time

from monque_engine import JobStatus
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.session.errors import sparkline
from monque_tui.console.widgets.status_tabs import StatusTabs
from monque_tui.demo.seed import SEED_JOBS, SeedJob, seed_id, seed_store

from .conftest import running_console, table_ids, wait_for

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
        # Reads cost nothing on this view's clock, so it refreshes at its floor (3 s) however
        # loaded the machine is; the back-off is test_errors_view_backoff.py's.
        screen.model.monotonic = lambda: 0.0
        pinned = screen.fetches
        screen.refresh_groups()
        await wait_for(lambda: screen.fetches > pinned)
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


async def test_at_80_columns_j_reaches_a_group_and_a_refresh_that_reorders_the_store_moves_no_row(
    seeded_url: str,
) -> None:
    """Issue 40: ``j``/``k`` did nothing on the errors view, and its rows re-sorted every 3 s by
    LAST SEEN (hidden at 80 columns), so Enter could open another group than the one read."""
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        screen = await _open_errors(app, pilot)
        order = [g.key for g in screen.model.groups]
        assert screen.table.cursor_row == 0
        await pilot.press("j", "j")
        assert screen.table.cursor_row == 2  # j moves, as on the jobs table
        await pilot.press("k")
        assert screen.table.cursor_row == 1
        chosen = screen.cursor_group
        assert chosen is not None
        # A group further down fails again: by LAST SEEN it now sorts first in the store.
        last = screen.model.groups[-1]
        assert last.key != chosen.key
        again = SeedJob(
            301,
            last.name,
            JobStatus.FAILED,
            1,
            fail_count=1,
            fail_reason=next(j.fail_reason for j in SEED_JOBS if j.error_type == last.error_type and j.fail_reason),
            error_type=last.error_type,
        )
        before = screen.fetches
        await seed_store(seeded_url, (again,), now_ms=time.time_ns() // 1_000_000)
        await wait_for(lambda: screen.fetches > before + 1 and last.key in screen.model.fresh, timeout=20)
        assert [g.key for g in screen.model.groups] == order  # no row moved
        assert screen.cursor_group is not None and screen.cursor_group.key == chosen.key
        marked = str(screen.table.get_row(last.key)[screen.table.get_column_index("count")])
        assert marked.startswith("↑")  # new activity is marked instead
        await pilot.press("enter")
        jobs = app.jobs_screen
        await wait_for(lambda: app.screen is jobs and jobs.window.query.error_group is not None)
        assert jobs.window.query.error_group == chosen.key
