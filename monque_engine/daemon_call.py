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
import concurrent.futures
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonThreadExecutor(ThreadPoolExecutor):
    """An executor that starts a daemon thread per call, so it still works in ``atexit``
    handlers (see the module docstring): ``call_in_thread`` hands its calls to it, and
    ``SyncMonque``'s loop has it as its default executor.

    PyMongo resolves a server's name with ``loop.getaddrinfo``, on the loop's default
    executor. A ``SyncMonque`` on MongoDB first used in an exit handler failed there with
    "Cannot reach MongoDB …: can't register atexit after shutdown" (a new thread pool may not
    start then), whatever the server's state. Calls on it are rare (a connection's name
    look-up), so a thread each costs nothing that matters. A ``ThreadPoolExecutor`` (a loop's
    ``set_default_executor`` takes no other: TypeError) whose pool never starts: ``submit`` is all it does."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()  # running from here: a cancelled wait never skips the call

        def main() -> None:
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(error)

        threading.Thread(target=main, name="monque-daemon-call", daemon=True).start()
        return future


#: The one executor ``call_in_thread`` hands its calls to (it holds no threads: see above).
_DAEMON_THREADS = DaemonThreadExecutor()


async def call_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a new daemon thread; its result or error here. Cancelling the wait
    stops waiting, not the call (as with ``asyncio.to_thread``)."""
    return await asyncio.get_running_loop().run_in_executor(_DAEMON_THREADS, fn, *args)


__all__ = ["DaemonThreadExecutor", "call_in_thread"]
