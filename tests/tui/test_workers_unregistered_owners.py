"""Defect 3 of issue 36: the Workers screen names owners of processing jobs that are missing
from the instance registry (Node Monque workers, likely) and says the mixed-fleet rule,
since Node's stale recovery at each Node start re-queues any job locked longer than Node's
lockTimeout, Python's included. Pilot drives the real console on a real SQLite file; the
seed's processing jobs belong to owners that never registered.
"""

from __future__ import annotations

from monque_engine.job import InstanceRecord
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import running_console, wait_for


def title_text(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    return str(screen.query_one("#workers-title").render())


async def test_unregistered_owners_are_named_with_the_rule_until_they_register(seeded_url: str) -> None:
    async with running_console(seeded_url, size=(160, 40)) as (app, _pilot):
        app.action_show_workers()  # type: ignore[attr-defined]
        await wait_for(lambda: isinstance(app.screen, WorkersScreen) and bool(app.screen.rows))  # type: ignore[attr-defined]
        inferred = sorted(row.id for row in app.screen.rows.values() if row.info.inferred)  # type: ignore[attr-defined]
        assert inferred, "the seed has owners that never registered"
        await wait_for(lambda: "Not registered" in title_text(app))
        title = title_text(app)
        for owner in inferred:
            assert owner in title
        assert "lockTimeout must exceed your longest Python job" in title
        # once every owner is in the registry (Python workers that registered), the note goes
        monque = app.session.monque  # type: ignore[attr-defined]
        for owner in inferred:
            await monque.store.upsert_instance(
                InstanceRecord(
                    id=owner,
                    host="h",
                    pid=1,
                    version="monque_engine",
                    started_at_ms=SEED_NOW_MS,
                    heartbeat_interval_ms=30_000,
                    workers={},
                    running=0,
                    processed=0,
                    failed=0,
                    last_heartbeat_ms=SEED_NOW_MS,
                )
            )
        await wait_for(lambda: "Not registered" not in title_text(app) and "Workers" in title_text(app))
