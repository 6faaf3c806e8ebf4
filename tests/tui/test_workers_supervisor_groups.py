"""Issue 38 part 4: the Workers view groups the worker processes of one supervisor
(``monque-tui --worker --processes N``) under a row of its own. Pilot on a real SQLite file."""

from __future__ import annotations

import dataclasses

from textual.widgets import DataTable

from monque_engine.job import InstanceRecord
from monque_tui.console.screens.workers import GROUP_KEY, WorkersScreen
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import running_console, wait_for


def _record(instance_id: str, supervisor: str | None, processed: int) -> InstanceRecord:
    return InstanceRecord(
        id=instance_id,
        host="h",
        pid=len(instance_id),
        version="monque_engine",
        started_at_ms=SEED_NOW_MS,
        heartbeat_interval_ms=30_000,
        workers={"email": 5},
        running=1,
        processed=processed,
        failed=0,
        last_heartbeat_ms=SEED_NOW_MS,
        supervisor=supervisor,
    )


async def test_children_of_a_supervisor_sit_under_its_row_with_their_sums(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 30)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        # Registered out of order, and a lone worker between them by id.
        for record in (_record("b-child-2", "sup-1", 7), _record("a-lone", None, 1), _record("a-child-1", "sup-1", 5)):
            await monque.store.upsert_instance(record)
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "b-child-2" in app.screen.rows)
        screen = app.screen
        assert isinstance(screen, WorkersScreen)
        table = screen.query_one(DataTable)
        keys = [key.value for key in table.rows]
        group = GROUP_KEY + "sup-1"
        assert keys.index(group) + 1 == keys.index("a-child-1")
        assert keys.index("a-child-1") + 1 == keys.index("b-child-2")
        assert "a-lone" in keys and str(table.get_cell("a-lone", "id")) == "a-lone"
        assert str(table.get_cell(group, "id")) == "supervisor sup-1"
        assert str(table.get_cell(group, "processed")) == "12"
        # What the live children hold in the store now (none here), not what their last
        # heartbeats reported (1 each): that was up to 30 s stale (a console probe).
        assert str(table.get_cell(group, "running")) == "0"
        assert str(table.get_cell(group, "state")) == "▾ 2 up"
        assert str(table.get_cell(group, "names")) == "email×10"
        assert str(table.get_cell("a-child-1", "id")).startswith("├ ")
        assert str(table.get_cell("b-child-2", "id")).startswith("└ ")
        assert "1 supervisor (--processes)" in str(screen.query_one("#workers-title").render())
        # A third child registers later: drawn under the supervisor, not at the end.
        await monque.store.upsert_instance(_record("c-child-3", "sup-1", 0))
        await wait_for(lambda: "c-child-3" in [key.value for key in table.rows], timeout=10)
        keys = [key.value for key in table.rows]
        assert keys.index("c-child-3") == keys.index("b-child-2") + 1
        assert str(table.get_cell("b-child-2", "id")).startswith("├ ")
        assert str(table.get_cell("c-child-3", "id")).startswith("└ ")


async def test_x_on_a_supervisor_row_says_it_holds_no_jobs(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 30)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        await monque.store.upsert_instance(_record("a-child-1", "sup-1", 5))
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "a-child-1" in app.screen.rows)
        screen = app.screen
        assert isinstance(screen, WorkersScreen)
        table = screen.query_one(DataTable)
        table.move_cursor(row=[key.value for key in table.rows].index(GROUP_KEY + "sup-1"))
        await pilot.press("x")
        await wait_for(lambda: any("holds no jobs" in str(n.message) for n in app._notifications))


async def test_a_dead_child_runs_nothing_and_the_group_counts_it_apart(seeded_url: str) -> None:
    """A child killed with -9 kept its last heartbeat's "3 running" for ever, the group row
    added it up, and the group read "3/3 up" then "2/3 up" for two slots (a console probe)."""
    async with running_console(seeded_url, size=(160, 30)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        dead = dataclasses.replace(
            _record("a-child-1", "sup-1", 5), running=3, last_heartbeat_ms=SEED_NOW_MS - 3_600_000
        )
        for record in (dead, _record("b-child-2", "sup-1", 7)):
            await monque.store.upsert_instance(record)
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "b-child-2" in app.screen.rows)
        table = app.screen.query_one(DataTable)
        group = GROUP_KEY + "sup-1"
        assert str(table.get_cell("a-child-1", "running")) == "-"
        assert str(table.get_cell(group, "running")) == "0"
        assert str(table.get_cell(group, "state")) == "▾ 1 up, 1 dead"
