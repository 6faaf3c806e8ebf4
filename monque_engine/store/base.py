"""The store as one object: ``JobStore``, every port at once (ports.py, ADR 0018).

A backend implements ``JobStore``; the ``Monque`` facade holds it and hands each scheduler
service the one port it uses, never this composite. Each store owns its queries (SQL,
MongoDB documents); the scheduler owns the semantics (which transition, which guard, which
event). What is declared here rather than on a port is what spans ports or the class: the
URL and collection-name checks made before a store exists, and the one-step default of
``count_in_steps`` (a read that counts a selection through Management's position).
"""

from __future__ import annotations

from abc import ABC
from collections.abc import AsyncGenerator
from typing import Any

from ..job import JobStatus
from .ports import Admin, Claims, Feed, Fleet, Intake, Liveness, Management, Reads, Retention
from .values import (
    InvalidCollectionNameError,
    PendingSplit,
    StepCount,
    StepPage,
    StoreListFilter,
    StoreLocation,
    StoreOpenOptions,
    StoreSelector,
)

__all__ = [
    "InvalidCollectionNameError",
    "JobStore",
    "PendingSplit",
    "StepCount",
    "StepPage",
    "StoreListFilter",
    "StoreLocation",
    "StoreOpenOptions",
    "StoreSelector",
]


class JobStore(Admin, Intake, Claims, Liveness, Reads, Management, Fleet, Retention, Feed, ABC):
    """One jobs collection: every port. Instances are bound to the event loop that opened them."""

    # -- before opening: a URL and a collection name, checked without touching the store -------
    @classmethod
    def from_url(cls, url: str, **options: Any) -> JobStore:
        """The store ``url`` names, built but not opened (``open_store`` picks the class)."""
        raise NotImplementedError(f"{cls.__name__} is not opened from a URL")

    @staticmethod
    def check_collection_name(name: str) -> str:
        """``name`` if this store can hold a collection of that name, else raise
        ``InvalidCollectionNameError`` saying what is wrong. Every store needs a name at all;
        a store with stricter rules (a SQLite table name) overrides this."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidCollectionNameError(
                f"Collection name {name!r} is empty; give a collection name (e.g. monque_jobs)"
            )
        return name

    @staticmethod
    def locate(url: str) -> StoreLocation:
        """Where ``url`` points (see ``StoreLocation``), without opening, creating or changing
        anything; raises ``InvalidStoreUrlError`` for a URL this store cannot use. Each store
        overrides it; ``monque_engine.store.locate_store`` picks the store by scheme."""
        raise NotImplementedError("a store locates its own URLs")

    # -- spans Reads and Management ------------------------------------------------------------
    async def count_in_steps(
        self, target: StoreListFilter | StoreSelector, step: int
    ) -> AsyncGenerator[StepCount, None]:
        """Count what a listing filter (or a bulk selector, its guard applied) matches, by
        status, in steps that each read about ``step`` jobs, yielding where the count stands
        after each; the last has ``done`` and the exact answer. Stop iterating (or cancel
        the task) to stop reading. A store whose counts are bounded otherwise (MongoDB's
        ``maxTimeMS``) may answer in one step: this default does, with one count per status."""
        statuses = _target_statuses(target)
        by_status: dict[JobStatus, int] = {}
        position: int | None = None
        for status in statuses:
            if isinstance(target, StoreSelector):
                # The first count's position bounds them all: a job unchanged since it is
                # unchanged at every later count, so it was counted (ADR 0015).
                found, at = await self.count_selected_as_of(target._replace(statuses=(status,)))
                position = at if position is None else position
            else:
                found = await self.count(target._replace(statuses=(status,)))
            by_status[status] = found
        if isinstance(target, StoreSelector) and position is None:
            _, position = await self.count_selected_as_of(target)  # nothing to count: the position alone
        total = sum(by_status.values())
        yield StepCount(by_status, total, total, True, position)


def _target_statuses(target: StoreListFilter | StoreSelector) -> tuple[JobStatus, ...]:
    """The statuses a count's target can match (a selector's guard and its listing's statuses)."""
    wanted = set(target.statuses) if target.statuses is not None else set(JobStatus)
    if isinstance(target, StoreSelector) and target.listing is not None and target.listing.statuses is not None:
        wanted &= set(target.listing.statuses)
    return tuple(status for status in JobStatus if status in wanted)
