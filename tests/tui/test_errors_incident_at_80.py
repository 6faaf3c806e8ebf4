"""The errors view at 80×24 tells the incident's time and a real message (issue 40 items 2, 4).

The on-call probe: one name failing with a connection reset for 10 minutes, whose jobs were
bulk-retried and failed again; another with a ``KeyError`` from payloads missing
``customer_id``. At 80 columns the view showed no FIRST SEEN at all, the message column read
``'<str>'`` (the group's template) and the type read ``…ctionResetError``; after the bulk
retry FIRST SEEN would have said the group started just now.

Real jobs fail through a real worker on a SQLite file; the failures of 10 minutes ago are
the group's failed-attempt counters as a worker flushes them then (a test cannot wait 10
minutes). Then the real console at 80×24 under Pilot, with the real clock.
"""

from __future__ import annotations

import asyncio

from monque_engine import Job, JobSelector, Monque
from monque_engine.errorgroups import error_counter_name
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig

from .conftest import open_errors, wait_for
from .test_confirm_width import screen_text

RESET = "payment.capture"
KEYS = "invoice.render"


async def _incident(url: str) -> None:
    """Two groups; the reset group is bulk-retried once and fails again."""
    failed = asyncio.Queue[str]()

    async def capture(job: Job) -> None:
        failed.put_nowait(job.id)
        raise ConnectionResetError(104, "Connection reset by peer")

    async def render(job: Job) -> None:
        failed.put_nowait(job.id)
        job.data["customer_id"]  # the bad payloads have none: KeyError: 'customer_id'

    monque = Monque(url, recover_stale_jobs=False, max_retries=1)
    await monque.initialize()
    monque.register(RESET, capture)
    monque.register(KEYS, render)
    for n in range(3):
        await monque.enqueue(RESET, {"n": n})
    for n in range(2):
        await monque.enqueue(KEYS, {"tenant": "acme", "n": n})
    try:
        await monque.start()
        for _ in range(5):
            await asyncio.wait_for(failed.get(), 20)
        await monque.stop()  # flushes the counters
        (reset,) = [group for group in await monque.error_groups() if group.name == RESET]
        ten_minutes_ago = reset.first_seen_ms // 60_000 - 10
        await monque.store.add_outcome_counts({(error_counter_name(reset.key), ten_minutes_ago): (0, 3)})
        assert (await monque.retry_jobs(JobSelector(error_group=reset.key))).count == 3
        for job in await monque.get_jobs(name=RESET):
            await monque.reschedule_job(job.id, job.created_at)
        await monque.start()
        for _ in range(3):
            await asyncio.wait_for(failed.get(), 20)
        await monque.stop()
    finally:
        await monque.close()


async def test_at_80_columns_first_seen_survives_a_bulk_retry_and_messages_are_real(store_url: str) -> None:
    await _incident(store_url)
    app = MonqueConsole(ConsoleConfig(url=store_url))  # the real clock: the failures are real
    async with app.run_test(size=(80, 24)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        screen = await open_errors(app, pilot, groups=2)
        await pilot.pause()
        text = screen_text(app)
        table = screen.table
        heading = text.splitlines()[table.region.y]
        assert "FIRST" in heading and "COUNT" in heading, heading
        lines = text.splitlines()[table.region.y + 1 : table.region.bottom]
        rows = {line.split()[0]: line for line in lines if line.strip()}
        assert set(rows) >= {RESET, KEYS}, text  # names whole
        assert "ConnectionResetError" in rows[RESET] and "…ctionResetError" not in rows[RESET]
        assert "10m ago" in rows[RESET], rows[RESET]  # not "now": the counters kept the first failures
        assert "KeyError: 'customer_id'" in rows[KEYS], rows[KEYS]  # a real message, not '<str>'
        assert "<str>" not in rows[KEYS]
        # the template is said in the status line for the group under the cursor
        await pilot.press("g")
        while screen.cursor_group is not None and screen.cursor_group.name != KEYS:
            await pilot.press("j")
        await pilot.pause()
        assert "pattern: '<str>'" in str(screen.query_one("#errors-status").render())


async def test_at_80_columns_a_groups_confirmation_and_tabs_name_a_real_message(store_url: str) -> None:
    """``R`` on the KeyError group asked to retry the jobs "in error group 'invoice.render
    KeyError: '<str>''": the template the table had stopped showing. The confirmation and the
    tabs line inside the group name a real message now, with the template beside it in the
    confirmation (the group reaches every message of that shape)."""
    from monque_tui.console.screens.confirm import ConfirmScreen

    await _incident(store_url)
    app = MonqueConsole(ConsoleConfig(url=store_url))
    async with app.run_test(size=(80, 24)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 10)
        screen = await open_errors(app, pilot, groups=2)
        await pilot.press("g")
        while screen.cursor_group is not None and screen.cursor_group.name != KEYS:
            await pilot.press("j")
        for key in ("R", "D"):
            await pilot.press(key)
            await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
            text = " ".join(line.strip() for line in screen_text(app).splitlines())
            assert "KeyError: 'customer_id'" in text, text
            assert "pattern: '<str>'" in text, text
            await pilot.press("n")
            await wait_for(lambda: app.screen is screen)
        await pilot.press("enter")
        jobs = app.jobs_screen
        await wait_for(lambda: app.screen is jobs and jobs.window.query.error_group is not None)
        await pilot.pause()
        tabs = screen_text(app).splitlines()
        assert any("group invoice.render KeyError: 'customer_id'" in line for line in tabs), "\n".join(tabs)
        assert "<str>'" not in (jobs.window.query.group_label or "").split(" (pattern: ")[0]
