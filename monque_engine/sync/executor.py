"""The sync client's loop's default executor: a daemon thread per call, so it works at exit.

PyMongo resolves a server's name with ``loop.getaddrinfo``, on the loop's default executor,
and Python lets no new thread pool start once it is exiting. A ``SyncMonque`` on MongoDB
first used in an exit handler failed there with "Cannot reach MongoDB …: can't register
atexit after shutdown", whatever the server's state. Calls on it are rare (a connection's
name look-up), so a thread each costs nothing that matters. (``daemon_call.call_in_thread``
does the same for the engine's own rare calls, awaited directly; this is the form a loop's
``set_default_executor`` takes, kept out of ``daemon_call`` so that the console's start does
not import ``concurrent.futures.thread``.)
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonThreadExecutor(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` (``set_default_executor`` takes no other: TypeError) whose pool
    never starts: ``submit`` runs each call on a daemon thread of its own."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()  # running from here: a cancelled wait never skips the call

        def main() -> None:
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(error)

        threading.Thread(target=main, name="monque-sync-executor-call", daemon=True).start()
        return future


__all__ = ["DaemonThreadExecutor"]
