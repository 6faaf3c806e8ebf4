"""Threads for sync (plain ``def``) handlers that cannot keep the program alive.

``asyncio.to_thread`` uses the loop's default executor, whose threads ``asyncio.run`` joins
on the way out and the interpreter joins again at exit. A sync handler that never returns
(a hung socket, a deadlock) is given up on by ``stop()`` after ``shutdown_timeout``, yet
the program still could not exit: ``close()`` returned and then ``asyncio.run`` waited for
that thread for ever. Threads cannot be cancelled, so these are daemon threads, reused
while there is work: an abandoned handler is left running as the process exits, and its
job is left to stale recovery, as ``stop()`` already says.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: An idle thread waits this long for the next sync handler before it ends.
IDLE_SECONDS = 30.0

_Item = tuple[
    asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[..., Any], tuple[Any, ...]
]


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():  # stop() stopped waiting; the result has nowhere to go
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class DaemonThreads:
    """Run callables on daemon threads: one per call in flight, idle ones reused."""

    def __init__(self, name: str = "monque-handler", idle_seconds: float = IDLE_SECONDS) -> None:
        self._name = name
        self._idle_seconds = idle_seconds
        self._work: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for work that no submitter has counted on yet

    def run(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Call ``fn(*args)`` on a daemon thread in the caller's context; await the result.

        Like ``asyncio.to_thread``, cancelling the returned future stops waiting, not the call.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1  # that thread will take this item (or another, all are alike)
        self._work.put((loop, future, contextvars.copy_context(), fn, args))
        if spawn:
            threading.Thread(target=self._serve, name=self._name, daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            try:
                loop, future, context, fn, args = self._work.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # still idle and uncounted on: end
                        self._idle -= 1
                        return
                continue  # a submitter counted on this thread just now: its item is coming
            try:
                outcome = (True, context.run(fn, *args))
            except BaseException as error:  # noqa: BLE001 - handed to the awaiting task (SystemExit too)
                outcome = (False, error)
            try:
                loop.call_soon_threadsafe(_settle, future, *outcome)
            except RuntimeError:  # the loop is closed: nobody waits for this any more
                pass
            del loop, future, context, fn, args, outcome  # hold nothing while idle
            with self._lock:
                self._idle += 1
