"""One blocking call off the event loop, on a daemon thread of its own.

Why not ``asyncio.to_thread``: it submits to the loop's default executor, and Python shuts
every ``concurrent.futures`` executor down before it runs the ``atexit`` handlers. A store
opened or closed from an exit handler (a ``SyncMonque`` first used there, or the clients
``monque_engine.sync`` closes at exit) then failed with "cannot schedule new futures after
shutdown", and the closed store's connections were left open. Starting a thread still works
there. Used for rare calls (the SQLite store's opening and closing of connections and its
feed's reader; the command line's reachability check, which blocks for up to
``--connect-timeout`` and must leave the loop free to hear a stop), never per job: a thread
start each is nothing beside them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():  # the awaiting task stopped waiting; the outcome has nowhere to go
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


async def call_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a new daemon thread; its result or error here. Cancelling the wait
    stops waiting, not the call (as with ``asyncio.to_thread``)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def main() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(*args))
        except BaseException as error:  # noqa: BLE001 - handed to the awaiting task
            outcome = (False, error)
        try:
            loop.call_soon_threadsafe(_settle, future, *outcome)
        except RuntimeError:  # the loop is closed: nobody waits for this any more
            pass

    threading.Thread(target=main, name="monque-sqlite-call", daemon=True).start()
    return await future


__all__ = ["call_in_thread"]
