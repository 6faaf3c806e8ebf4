"""A text view's reads in steps, each in a task of its own so it can be stopped at once.

A "contains" filter has no index: its counts read every job, and so does the page of a string
few jobs hold (seconds at 10M jobs, ADR 0008). The engine reads such a view in bounded steps
(``Monque.count_jobs_in_steps``, ``get_jobs_in_steps``, ``count_bulk_in_steps``); here each of
those runs in a task the session owns, reports every step (``SearchProgressed``: "searching…
3.2M of 10M jobs read"), and is cancelled the moment the view changes or the operator presses
Esc. Cancelling the task ends the engine's current statement too (the store interrupts it), so
no reader thread goes on reading the file for a view nobody looks at.

The caller awaiting ``Searches.run`` gets the last progress, or None when the read was
stopped; it is never cancelled by that stop itself (the session's timers and workers await
these reads, and a cancellation escaping a timer would end the timer).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, TypeVar

from ..query import JobQuery
from .events import SearchProgressed, SessionEvent


class Step(Protocol):
    @property
    def read(self) -> int: ...

    @property
    def total(self) -> int: ...

    @property
    def done(self) -> bool: ...


P = TypeVar("P", bound=Step)


class Searches:
    """The running reads in steps, their latest progress, and the way to stop them."""

    def __init__(self, emit: Callable[[SessionEvent], None]) -> None:
        self._emit = emit
        #: Each running read's task, with what it is, its view and its latest progress.
        self._running: dict[asyncio.Task[Any], SearchProgressed] = {}

    @property
    def running(self) -> list[SearchProgressed]:
        """The latest progress of every read still running."""
        return list(self._running.values())

    async def run(
        self,
        what: str,
        query: JobQuery,
        steps: AsyncIterator[P],
        on_step: Callable[[P], None] | None = None,
    ) -> P | None:
        """Read ``steps`` to the end in a task of its own; the last step, or None if stopped.

        ``on_step`` sees every step (the page's rows found so far, shown as they come)."""
        task = asyncio.create_task(self._iterate(what, query, steps, on_step))
        self._running[task] = SearchProgressed(what, query, 0, 0)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()  # our caller was cancelled (a newer load replaced it): so is its read
            latest = self._running.pop(task, None)
            if latest is not None:
                self._emit(SearchProgressed(what, query, latest.read, latest.total, ended=True, stopped=True))
            raise
        latest = self._running.pop(task, None)
        if task.cancelled():
            if latest is not None:
                self._emit(SearchProgressed(what, query, latest.read, latest.total, ended=True, stopped=True))
            return None
        try:
            last = task.result()
        except BaseException:
            self._emit(SearchProgressed(what, query, 0, 0, ended=True))
            raise
        self._emit(SearchProgressed(what, query, last.read if last else 0, last.total if last else 0, ended=True))
        return last

    async def _iterate(
        self, what: str, query: JobQuery, steps: AsyncIterator[P], on_step: Callable[[P], None] | None
    ) -> P | None:
        last: P | None = None
        try:
            async for progress in steps:
                last = progress
                task = asyncio.current_task()
                if not progress.done and task in self._running:
                    event = SearchProgressed(what, query, progress.read, progress.total)
                    self._running[task] = event
                    self._emit(event)
                if on_step is not None:
                    on_step(progress)
        finally:
            closing = getattr(steps, "aclose", None)
            if closing is not None:
                await closing()  # the engine's generator: its store read stops now
        return last

    def stop(self, keep: Callable[[SearchProgressed], bool] | None = None) -> list[SearchProgressed]:
        """Stop every running read (but those ``keep`` says to keep); what they had read."""
        stopped = []
        for task, progress in list(self._running.items()):
            if keep is not None and keep(progress):
                continue
            task.cancel()
            stopped.append(progress)
        return stopped


def compact(count: int) -> str:
    """``3.2M``, ``640k``, ``9,500``: a job count short enough for a progress line."""
    if count >= 1_000_000:
        value = f"{count / 1_000_000:.1f}".removesuffix(".0")
        return f"{value}M"
    if count >= 10_000:
        return f"{count // 1000}k"
    return f"{count:,}"


def progress_text(event: SearchProgressed) -> str:
    """``3.2M of 10M jobs read``: how far a read in steps got."""
    return f"{compact(event.read)} of {compact(max(event.total, event.read))} jobs read"
