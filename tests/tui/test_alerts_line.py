"""Issue 40: the alerts line on every screen, compact at 80 columns.

A dead worker still holding jobs, a name with jobs due and no worker consuming it, and a
paused name with jobs due were each visible only on the right screen (``W``, ``w``), and the
header never said so. The rules are tested on ``build_alerts`` / ``alerts_text`` alone; the
line itself by Pilot on a real SQLite file, on each screen, at 80x24.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from monque_engine import InstanceInfo, QueueHealth
from monque_engine.job import InstanceRecord
from monque_tui.console.screens.detail import JobDetailScreen
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.console.session.alerts import alerts_text, build_alerts
from monque_tui.console.session.events import Alerts
from monque_tui.console.session.fleet import InstanceRow
from monque_tui.console.widgets.alerts_line import AlertsLine
from monque_tui.console.widgets.console_header import ConsoleHeader

from .conftest import running_console, wait_for

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


def _info(instance: str, workers: dict[str, int], held: int = 0, alive: bool = True) -> InstanceInfo:
    return InstanceInfo(
        id=instance,
        inferred=False,
        alive=alive,
        jobs_held=held,
        last_heartbeat=NOW,
        heartbeat_interval=30.0,
        host="h",
        pid=1,
        version="monque_engine",
        started_at=NOW,
        workers=workers,
        running=0,
        processed=0,
        failed=0,
    )


def _health(name: str, due: int, paused: bool = False) -> QueueHealth:
    return QueueHealth(name=name, due=due, scheduled=0, processing=0, latency=None, paused=paused, per_minute=())


def test_the_three_alerts_and_what_does_not_alert() -> None:
    rows = [
        InstanceRow(_info("w-dead", {"billing": 4}, held=4, alive=False), age_ms=900_000, dead=True, rate=None),
        InstanceRow(_info("w-live", {"email.send": 10}), age_ms=1_000, dead=False, rate=None),
        InstanceRow(_info("w-dead-empty", {"x": 1}, alive=False), age_ms=900_000, dead=True, rate=None),
    ]
    healths = [
        _health("email.send", 12),  # consumed: no alert
        _health("billing", 120),  # its only consumer is dead
        _health("resize", 0),  # nothing due: no alert
        _health("webhook", 2_500, paused=True),  # paused with jobs due
    ]
    alerts = build_alerts(rows, healths)
    assert alerts == Alerts(dead=(("w-dead", 4),), no_worker=(("billing", 120),), paused=(("webhook", 2_500),))
    assert not build_alerts(rows[1:2], healths[:1])


def test_the_line_fits_80_columns_and_never_cuts_a_count() -> None:
    alerts = Alerts(
        dead=(("w-7", 4),),
        no_worker=tuple((f"billing.step-{n}", 1_234_567) for n in range(5)),
        paused=(("webhook.deliver", 2_500),),
    )
    wide = alerts_text(alerts, 300).plain
    assert "1 dead worker holding 4 jobs" in wide and "billing.step-0 (1,234,567)" in wide and "+2" in wide
    narrow = alerts_text(alerts, 78).plain
    assert len(narrow) <= 78
    assert "✖ 1 dead holding 4 (W)" in narrow
    for token in narrow.replace("(", " ").replace(")", " ").split():
        if token[:1].isdigit():
            assert token in {"1", "4", "1.2M", "2,500", "5"} or token.startswith("+"), narrow


def line_on_top(app: Any) -> str:
    """The alerts line of the screen on top, or "" while it is hidden (or absent)."""
    lines = list(app.screen.query(AlertsLine))
    return "" if not lines or not lines[0].display else lines[0].render().plain


async def test_every_screen_shows_the_alerts_line_at_80_columns(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        # A worker that stopped beating 15 minutes ago and still holds the seed's processing jobs.
        processing = [job for job in await monque.get_jobs(limit=200) if job.status.value == "processing"]
        assert processing
        await monque.store.upsert_instance(
            InstanceRecord(
                id="w-dead",
                host="h",
                pid=1,
                version="monque_engine",
                started_at_ms=0,
                heartbeat_interval_ms=30_000,
                workers={"billing": 4},
                running=0,
                processed=0,
                failed=0,
                last_heartbeat_ms=int(datetime.now(UTC).timestamp() * 1000) - 900_000,
            )
        )
        await monque.pause("send-email")

        await wait_for(lambda: "paused, due" in line_on_top(app) and "no worker" in line_on_top(app), timeout=20)
        assert len(line_on_top(app)) <= 78
        assert "send-email" in line_on_top(app)  # paused with due jobs
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "paused, due" in line_on_top(app))
        await pilot.press("escape", "e")
        await wait_for(lambda: isinstance(app.screen, ErrorsScreen) and "paused, due" in line_on_top(app))
        await pilot.press("escape", "enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and "paused, due" in line_on_top(app))
        await pilot.press("escape")  # the detail screen is kept for reuse, closed
        await wait_for(lambda: app.screen is app.jobs_screen)
        await monque.resume("send-email")
        await wait_for(lambda: "paused, due" not in line_on_top(app), timeout=20)  # gone when resolved
        await pilot.press("enter")  # the reused detail shows what changed while it was closed
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen))
        await pilot.pause()
        assert "no worker" in line_on_top(app) and "paused, due" not in line_on_top(app)


@pytest.mark.parametrize("how", ["deleted", "replaced"])
async def test_a_lost_store_takes_the_alerts_place_on_every_screen(seeded_url: str, tmp_path: Path, how: str) -> None:
    """The alerts line kept its last alerts after the store file was deleted or replaced under
    the console: ``⏸ paused, due`` on every screen for a store that was gone. It says what the
    header says instead (the jobs screen's header says it there, so its line clears)."""
    path = Path(seeded_url.removeprefix("sqlite:///"))
    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        await monque.pause("send-email")

        await wait_for(lambda: "paused, due" in line_on_top(app), timeout=20)
        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "paused, due" in line_on_top(app))
        if how == "deleted":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        else:
            other = tmp_path / "other.db"
            sqlite3.connect(other).close()
            os.replace(other, path)
        app.session.buffer.must_reload()  # as after any burst: the next flush reads the store
        lost = "✗ store file lost: restart the console"
        await wait_for(lambda: lost in line_on_top(app), timeout=20)
        assert "paused" not in line_on_top(app)
        app.session.alerts_watch._next_at = 0.0  # an alerts read now: a lost file stays lost
        await app.session.refresh_alerts()
        await pilot.pause()
        assert lost in line_on_top(app) and app.session.store_state.lost
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        await pilot.pause()
        assert line_on_top(app) == ""  # the header says it on this screen
        assert lost in app.jobs_screen.query_one(ConsoleHeader).render().plain
        for key, kind in (("e", ErrorsScreen), ("enter", JobDetailScreen)):  # opened since: the same
            await pilot.press(key)
            await wait_for(lambda kind=kind: isinstance(app.screen, kind))  # type: ignore[misc]
            await pilot.pause()
            assert lost in line_on_top(app) and "paused" not in line_on_top(app), line_on_top(app)
            await pilot.press("escape")
            await wait_for(lambda: app.screen is app.jobs_screen)


async def test_an_outage_takes_the_alerts_place_and_they_come_back_with_the_store(seeded_url: str) -> None:
    """A transient outage (the engine's reads raising its ``ConnectionError``): the line says
    the store is retrying, not the alerts of before; when it answers, the alerts are read anew."""
    from monque_engine import ConnectionError as StoreConnectionError

    async with running_console(seeded_url, size=(80, 24)) as (app, pilot):
        monque = app.session.monque
        assert monque is not None
        await monque.pause("send-email")

        await pilot.press("W")
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and "paused, due" in line_on_top(app), timeout=20)
        real = monque.instances

        async def down(*args: object, **kwargs: object) -> object:
            raise StoreConnectionError("MongoDB at mongodb://u:***@db1/app is unreachable")

        monque.instances = down  # type: ignore[method-assign]
        await wait_for(lambda: "✗ store error, retrying" in line_on_top(app), timeout=20)
        assert "paused" not in line_on_top(app)
        monque.instances = real  # type: ignore[method-assign]
        await wait_for(lambda: "paused, due" in line_on_top(app), timeout=30)
