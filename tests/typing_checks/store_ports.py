"""Checked by mypy (``make lint``), never run: the store's ports (ADR 0018) at the type level.

Every store is every port, and a ``Monque`` is what the metrics collector reads. Each port is
narrow: the lines marked ``type: ignore[attr-defined]`` must stay errors (strict mypy reports
an ignore that is no longer needed), so a port that grew another port's calls would fail
``make lint`` here (checked: adding ``cancel`` to Claims fails it). tests/test_store_ports.py checks
the names a service imports; this checks what a port lets it call.
"""

from __future__ import annotations

from monque_engine.metrics import MetricsSource
from monque_engine.scheduler.monque import Monque
from monque_engine.store import ports
from monque_engine.store.base import JobStore
from monque_engine.store.mongo import MongoStore
from monque_engine.store.sqlite import SqliteStore


def every_store_is_every_port(store: JobStore, sqlite: SqliteStore, mongo: MongoStore) -> None:
    intake: ports.Intake = store
    claims: ports.Claims = sqlite
    liveness: ports.Liveness = mongo
    reads: ports.Reads = store
    management: ports.Management = sqlite
    fleet: ports.Fleet = mongo
    retention: ports.Retention = store
    feed: ports.Feed = sqlite
    admin: ports.Admin = mongo
    print(intake, claims, liveness, reads, management, fleet, retention, feed, admin)


def a_monque_is_a_metrics_source(m: Monque) -> MetricsSource:
    return m


async def each_port_holds_only_its_own_calls(
    intake: ports.Intake,
    claims: ports.Claims,
    liveness: ports.Liveness,
    reads: ports.Reads,
    management: ports.Management,
    fleet: ports.Fleet,
    retention: ports.Retention,
    feed: ports.Feed,
    source: MetricsSource,
) -> None:
    await intake.claim("w", "me", 0, 1, 1000)  # type: ignore[attr-defined]
    await claims.cancel("id", 0)  # type: ignore[attr-defined]
    await claims.get("id")  # type: ignore[attr-defined]
    await liveness.claim("w", "me", 0, 1, 1000)  # type: ignore[attr-defined]
    await reads.retry("id", 0)  # type: ignore[attr-defined]
    await reads.insert_many([])  # type: ignore[attr-defined]
    await management.page_in_steps  # type: ignore[attr-defined]
    await fleet.recover_stale(0, 0)  # type: ignore[attr-defined]
    await retention.delete_many  # type: ignore[attr-defined]
    await feed.close()  # type: ignore[attr-defined]
    await source.store.cancel("id", 0)  # type: ignore[attr-defined]
