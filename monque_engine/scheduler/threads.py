"""Threads for sync (plain ``def``) handlers that cannot keep the program alive.

``asyncio.to_thread`` uses the loop's default executor, whose threads ``asyncio.run`` joins
on the way out and the interpreter joins again at exit. A sync handler that never returns
(a hung socket, a deadlock) is given up on by ``stop()`` after ``shutdown_timeout``, yet
the program still could not exit: ``close()`` returned and then ``asyncio.run`` waited for
that thread for ever. Threads cannot be cancelled, so these are daemon threads, reused
while there is work and as many at most as the default executor would start: an abandoned
handler is left running as the process exits, and its job is left to stale recovery, as
``stop()`` already says.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
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
    """Run callables on daemon threads: at most ``max_threads`` at once (as many as
    asyncio's default executor would use), idle ones reused, the rest queued."""

    def __init__(
        self, name: str = "monque-handler", idle_seconds: float = IDLE_SECONDS, max_threads: int | None = None
    ) -> None:
        self._name = name
        self._idle_seconds = idle_seconds
        self._max = max_threads if max_threads is not None else min(32, (os.cpu_count() or 1) + 4)
        self._work: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._lock = threading.Lock()
        # Under the lock: threads alive; threads waiting for work that no queued item is
        # meant for yet; items queued while every thread was busy and none could be added.
        self._alive = 0
        self._idle = 0
        self._backlog = 0

    def run(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Call ``fn(*args)`` on a daemon thread in the caller's context; await the result.

        Like ``asyncio.to_thread``, cancelling the returned future stops waiting, not the call.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            spawn = False
            if self._idle > 0:
                self._idle -= 1  # an idle thread will take it (any of them: all are alike)
            elif self._alive < self._max:
                self._alive += 1
                spawn = True
            else:
                self._backlog += 1  # the next thread to finish takes it
        if spawn:
            try:  # started before the put: it waits for the item; a failure leaves nothing queued
                threading.Thread(target=self._serve, name=self._name, daemon=True).start()
            except BaseException:
                with self._lock:
                    self._alive -= 1
                raise
        self._work.put((loop, future, contextvars.copy_context(), fn, args))
        return future

    def _serve(self) -> None:
        while True:
            try:
                loop, future, context, fn, args = self._work.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # still idle and no item is meant for this thread: end
                        self._idle -= 1
                        self._alive -= 1
                        return
                continue  # an item was meant for an idle thread just now: take it
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
                if self._backlog > 0:
                    self._backlog -= 1  # a queued item is this thread's next
                else:
                    self._idle += 1
