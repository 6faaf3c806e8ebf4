"""The filter bar's payload terms at 80×24 (issue 40 item 5).

The on-call probe: 64 pending jobs whose payload had no ``customer_id`` could not be selected
at all ("contains" text cannot say "has no key"). Now ``data.customer_id missing`` after the
ranges in the bar's "when" field selects exactly them, the tabs line names the filter, and
``C`` cancels exactly those jobs, checked in the store. A real SQLite file, the real console
under Pilot.
"""

from __future__ import annotations

from monque_engine import JobStatus, Monque
from monque_tui.console.screens.confirm import ConfirmScreen

from .conftest import running_console, store_jobs, table_ids, wait_for
from .test_confirm_width import screen_text

NAME = "invoice.render"


async def _jobs(url: str) -> tuple[set[str], set[str]]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        good = {(await monque.enqueue(NAME, {"tenant": "acme", "customer_id": n})).id for n in range(4)}
        bad = {(await monque.enqueue(NAME, {"tenant": "acme", "customer": {"customer_id": n}})).id for n in range(3)}
        return good, bad
    finally:
        await monque.close()


async def test_data_missing_selects_and_cancels_exactly_the_bad_payloads(store_url: str) -> None:
    good, bad = await _jobs(store_url)
    async with running_console(store_url, size=(80, 24)) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) == len(good | bad))
        await pilot.press("slash", "tab", "tab", *"data.customer_id missing", "enter", "escape")
        await wait_for(lambda: set(table_ids(app)) == bad)
        assert app.jobs_screen.window.query.data
        line = next(text for text in screen_text(app).splitlines() if "│" in text and "where" in text)
        assert "data.customer_id missing" in line, line
        await pilot.press("C")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.plan.count == len(bad)  # type: ignore[attr-defined]
        await pilot.press("y")
        await wait_for(lambda: not isinstance(app.screen, ConfirmScreen))
        await wait_for(lambda: {job.status for job in app.jobs_screen.window.rows} == {JobStatus.CANCELLED})
    stored = await store_jobs(store_url)
    assert {i for i, job in stored.items() if job.status is JobStatus.CANCELLED} == bad
    assert {stored[i].status for i in good} == {JobStatus.PENDING}


async def test_a_bad_term_says_why_in_the_bar_and_changes_nothing(store_url: str) -> None:
    good, bad = await _jobs(store_url)
    async with running_console(store_url, size=(80, 24)) as (app, pilot):
        await wait_for(lambda: len(table_ids(app)) == len(good | bad))
        await pilot.press("slash", "tab", "tab", *"data.items.0 missing", "enter")
        await wait_for(lambda: "into an array" in screen_text(app))
        assert not app.jobs_screen.window.query.data
        assert len(table_ids(app)) == len(good | bad)
