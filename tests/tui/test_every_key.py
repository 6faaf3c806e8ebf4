"""Every key of the registry (footer, help and palette read the same table) reaches its action.

Each action method is replaced by a recorder for the test, so the key is checked to dispatch
the right action with the right arguments on the screen where it is offered; what the
actions do is covered by the other console tests (and the palette runs each one for real).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.actions import parse as parse_action

from monque_engine import Monque
from monque_tui.console.app import MonqueConsole
from monque_tui.console.bindings import REGISTRY
from monque_tui.console.screens import detail as detail_module
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.screens.help import HelpScreen
from monque_tui.console.screens.jobs import JobsScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.console.widgets.job_table import JobTable
from monque_tui.demo.seed import seed_id

from .conftest import move_to, running_console, wait_for

PENDING = seed_id(1)
FAILED = seed_id(2)
CLASS_OF_SCOPE = {
    "table": JobTable,
    "jobs": JobsScreen,
    "app": MonqueConsole,
    "detail": JobDetailScreen,
    "queues": QueuesScreen,
    "errors": ErrorsScreen,
    "workers": WorkersScreen,
}
PILOT_KEY = {"?": "question_mark", ":": "colon", "/": "slash", " ": "space"}
#: Detail keys of the attempt timeline: checked on a failed job with attempts (the big job has none).
ATTEMPT_KEYS = ("attempt(1)", "attempt(-1)", "copy_traceback", "traceback_page(1)", "traceback_page(-1)")


def _spy(monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
    names = {parse_action(spec.action)[1] for spec in REGISTRY}
    for cls in (*CLASS_OF_SCOPE.values(), HelpScreen):
        for name in names:
            if hasattr(cls, f"action_{name}"):

                def record(self: Any, *args: Any, _name: str = name) -> None:
                    calls.append((_name, args))

                monkeypatch.setattr(cls, f"action_{name}", record)


async def test_every_registry_key_dispatches_its_action(seeded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    big = Monque(seeded_url, recover_stale_jobs=False)
    await big.initialize()
    payload = {"rows": ["x" * 100] * 400}  # several payload pages, so > and < are live
    big_job = await big.enqueue("big", payload)
    await big.close()
    async with running_console(seeded_url) as (app, pilot):
        calls: list[tuple[str, tuple[Any, ...]]] = []
        screen = app.jobs_screen
        checked: set[tuple[str, str]] = set()

        async def press(key: str, spec: Any) -> None:
            calls.clear()
            await pilot.press(PILOT_KEY.get(key, key))
            await pilot.pause()
            _, name, params = parse_action(spec.action)
            assert (name, tuple(params)) in calls, f"{key!r} did not run {spec.action} (ran {calls})"
            checked.add((key, spec.action))

        # jobs screen and table keys (with the cursor on a pending job; retry on a failed one)
        await move_to(app, pilot, PENDING)
        screen.apply_query(screen.query_state.with_status(None))
        _spy(monkeypatch, calls)
        for spec in REGISTRY:
            if not ({"jobs", "table", "app"} & set(spec.scopes)) or spec.action == "back":
                continue
            if spec.action in ("act('retry')",):
                continue
            if spec.action in ("clear_filter", "toggle_name_pause"):
                continue  # need a filter: checked below with a name filter set
            for key in spec.keys.split(","):
                screen.table.focus()
                await press(key, spec)
        monkeypatch.undo()
        # retry on a failed job; Esc with a filter set
        await move_to(app, pilot, FAILED)
        _spy(monkeypatch, calls)
        await press("r", next(s for s in REGISTRY if s.action == "act('retry')"))
        monkeypatch.undo()
        screen.apply_query(screen.query_state.with_status(None).__class__(name="send-email"))
        await wait_for(lambda: screen.window.query.name == "send-email")
        _spy(monkeypatch, calls)
        screen.table.focus()
        await press("P", next(s for s in REGISTRY if s.action == "toggle_name_pause"))
        screen.table.focus()
        await press("escape", next(s for s in REGISTRY if s.action == "clear_filter"))
        monkeypatch.undo()
        # the detail screen (a multi-page payload) and its Back
        screen.apply_query(screen.query_state.__class__())
        await wait_for(lambda: screen.window.position(big_job.id) is not None)
        await move_to(app, pilot, big_job.id)
        app.show_job(big_job.id)
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.payload is not None)
        _spy(monkeypatch, calls)
        for spec in REGISTRY:
            if "detail" in spec.scopes or spec.action == "back":
                if spec.action in ("act('retry')", "release_owner"):
                    continue  # the job is pending: not offered here (checked on the jobs / workers screen)
                if spec.action in ATTEMPT_KEYS:
                    continue
                for key in spec.keys.split(","):
                    await press(key, spec)
        monkeypatch.undo()
        app.pop_screen()
        # the attempt timeline keys, on a failed job with three attempts (the middle one selected: both
        # ways open), its traceback cut into small pages (the second one shown: both ways open)
        monkeypatch.setattr(detail_module, "TRACEBACK_PAGE_CHARS", 100)
        app.show_job(FAILED)
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and len(app.screen.attempts) == 3)
        monkeypatch.undo()
        app.screen.selected, app.screen.trace_page = 1, 1
        _spy(monkeypatch, calls)
        for spec in REGISTRY:
            if spec.action in ATTEMPT_KEYS:
                for key in spec.keys.split(","):
                    await press(key, spec)
        monkeypatch.undo()
        app.pop_screen()
        # the errors view: Enter, R and D on the failed webhook group
        app.action_show_errors()
        await wait_for(
            lambda: (
                isinstance(app.screen, ErrorsScreen)
                and bool(app.screen.query("DataTable"))
                and app.screen.table.row_count > 0
            )
        )
        errors = app.screen
        keys = [g.key for g in errors.model.groups]
        errors.table.move_cursor(row=next(i for i, g in enumerate(errors.model.groups) if g.failed))
        await pilot.pause()
        _spy(monkeypatch, calls)
        monkeypatch.setattr(ErrorsScreen, "refresh_groups", lambda self: None)  # keep the rows still
        for spec in REGISTRY:
            if "errors" in spec.scopes:
                for key in spec.keys.split(","):
                    errors.table.focus()
                    await press(key, spec)
        assert keys
        monkeypatch.undo()
        app.pop_screen()
        # the queues screen: Enter shows the jobs of the row
        app.action_show_queues()
        await wait_for(
            lambda: (
                isinstance(app.screen, QueuesScreen)
                and bool(app.screen.query("DataTable"))
                and app.screen.query_one("DataTable").row_count > 0
            )
        )
        _spy(monkeypatch, calls)
        for spec in REGISTRY:
            if "queues" in spec.scopes and "jobs" not in spec.scopes:
                for key in spec.keys.split(","):
                    await press(key, spec)
        await press("P", next(s for s in REGISTRY if s.action == "toggle_name_pause"))
        monkeypatch.undo()
        app.pop_screen()
        # the workers screen: x on an inferred owner of the seeded processing jobs
        app.action_show_workers()
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and bool(app.screen.rows))
        _spy(monkeypatch, calls)
        for spec in REGISTRY:
            if "workers" in spec.scopes:
                for key in spec.keys.split(","):
                    await press(key, spec)
        monkeypatch.undo()
    every = {(key, spec.action) for spec in REGISTRY for key in spec.keys.split(",")}
    assert every - checked == set(), every - checked


def test_scopes_match_the_scope_literal() -> None:
    """``Scope`` is a Literal: the registry, every screen's SCOPES and the help's names use
    exactly its values (mypy checks the literals; this checks what runs, e.g. getattr'd SCOPES)."""
    from typing import get_args

    from monque_tui.console.bindings import Scope
    from monque_tui.console.screens.help import SCOPE_NAMES

    allowed = set(get_args(Scope))
    assert {scope for spec in REGISTRY for scope in spec.scopes} == allowed
    assert set(SCOPE_NAMES) == allowed
    for screen in (JobDetailScreen, ErrorsScreen, HelpScreen, JobsScreen, QueuesScreen, WorkersScreen):
        assert set(screen.SCOPES) <= allowed, screen.__name__
