"""Editing keys in the console's text fields run in order with the characters around them.

Over a slow ssh link keys arrive in one read, each handed to the focused field at once.
Textual's ``Input`` runs its editing keys (Backspace, ``ctrl+u``) as bindings only once the
key has bubbled back to the app, after the characters behind it were inserted: in tmux,
``/`` ``ctrl+u`` ``zzz`` left the filter's name field empty, and ``abc`` Backspace ``d``
read ``abc`` (console probe; Textual #6605). The keys are posted to the field here without
waiting between them, as a batched read delivers them.
"""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from monque_tui.console.screens.confirm import ConfirmScreen
from monque_tui.console.widgets.filter_bar import FilterBar

from .conftest import running_console, store_jobs, wait_for


def _burst(field: Input, keys: list[tuple[str, str | None]]) -> None:
    for key, character in keys:
        field.post_message(events.Key(key, character))


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ([("a", "a"), ("b", "b"), ("backspace", None), ("c", "c")], "ac"),
        ([("x", "x"), ("ctrl+u", None), ("z", "z"), ("z", "z")], "zz"),
    ],
)
async def test_a_burst_of_keys_edits_the_filter_field_in_order(
    seeded_url: str, keys: list[tuple[str, str | None]], expected: str
) -> None:
    async with running_console(seeded_url, size=(100, 30)) as (app, pilot):
        await pilot.press("slash")
        bar = app.jobs_screen.query_one(FilterBar)
        await wait_for(lambda: isinstance(app.screen.focused, Input))
        field = app.screen.focused
        assert isinstance(field, Input) and bar in field.ancestors
        _burst(field, keys)
        await wait_for(lambda: field.value == expected or len(field.value) > len(expected))
        await pilot.pause()
        assert field.value == expected


async def test_a_burst_in_the_typed_count_prompt_is_read_in_order(seeded_url: str) -> None:
    """The delete-everything prompt asks for the count typed: ``9`` Backspace ``N`` must read ``N``."""
    before = await store_jobs(seeded_url)
    async with running_console(seeded_url, size=(100, 30)) as (app, pilot):
        await pilot.press("D")
        await wait_for(lambda: isinstance(app.screen, ConfirmScreen))
        field = app.screen.query_one("#confirm-typed", Input)
        await wait_for(lambda: field.has_focus)
        count = str(app.screen.plan.count)  # type: ignore[attr-defined]
        _burst(field, [("9", "9"), ("backspace", None), *[(c, c) for c in count]])
        await wait_for(lambda: len(field.value) >= len(count))
        await pilot.pause()
        assert field.value == count
        await pilot.press("escape")
    assert await store_jobs(seeded_url) == before


async def test_tab_in_a_burst_moves_the_focus_before_the_characters_behind_it(seeded_url: str) -> None:
    """``invoice.render`` Tab Tab ``data.customer_id missing`` typed fast over ssh filtered on the
    name ``invoice.renderdata.customer_id missing``: Tab (the app's binding) moved the focus only
    after the characters behind it had gone into the name field (console probe)."""
    async with running_console(seeded_url, size=(100, 30)) as (app, pilot):
        await pilot.press("slash")
        bar = app.jobs_screen.query_one(FilterBar)
        await wait_for(lambda: isinstance(app.screen.focused, Input))
        name = app.screen.focused
        assert isinstance(name, Input) and name.id == "filter-name"
        _burst(name, [("q", "q"), ("tab", None), ("tab", None), ("d", "d"), ("a", "a")])
        when = bar.query_one("#filter-when", Input)
        await wait_for(lambda: when.value == "da" or len(name.value) > 1)
        await pilot.pause()
        assert (name.value, when.value) == ("q", "da")
        assert when.has_focus
