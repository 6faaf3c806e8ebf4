"""The filter bar's "contains" field means exactly what it says (issue 25, points 3 and 4).

A NUL in it matched every job (SQLite's LIKE stopped at it), so ``D`` offered to delete the
whole store; now the bar says why the text cannot be searched, and the bulk keys act on
nothing. A quote is found as typed. Real app driven by Pilot over a seeded SQLite file.
"""

from __future__ import annotations

from textual.widgets import Input

from monque_engine import Monque
from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar

from .conftest import running_console, store_jobs, table_ids, wait_for
from .toasts import said, said_first


async def test_a_nul_in_contains_is_refused_inline_and_d_deletes_nothing(seeded_url: str) -> None:
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        screen = app.jobs_screen
        await wait_for(lambda: len(table_ids(app)) == len(before))
        await pilot.press("slash")
        bar = screen.query_one(FilterBar)
        bar.query_one("#filter-text", Input).value = "a\x00b"
        await pilot.press("enter")
        await wait_for(lambda: bar.error is not None and "NUL" in bar.error)
        assert table_ids(app) == []
        await pilot.press("escape")  # leave the bar: it keeps its text and its error; the keys act on the view
        for key, says in (("D", "Nothing to delete"), ("A", "Nothing marked")):
            await pilot.press(key)
            await wait_for(lambda says=says: said_first(app, says))
        assert said(app, "NUL")
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.is_running
    assert set(await store_jobs(seeded_url)) == set(before)


async def test_a_quote_in_contains_is_found_as_typed(store_url: str) -> None:
    m = Monque(store_url)
    await m.initialize()
    quoted = await m.enqueue("mail", {"subject": 'the "big" sale'})
    await m.enqueue("mail", {"subject": "a plain one"})
    await m.close()
    async with running_console(store_url) as (app, pilot):
        screen = app.jobs_screen
        await wait_for(lambda: len(table_ids(app)) == 2)
        await pilot.press("slash", "tab", "tab", "tab", *'"big"', "enter")
        await wait_for(lambda: screen.window.query.text == '"big"' and table_ids(app) == [quoted.id])
