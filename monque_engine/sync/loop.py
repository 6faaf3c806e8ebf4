"""The process's one background event loop, on which synchronous callers' work runs.

Why one loop in a daemon thread, and not ``asyncio.run`` per call: a store is bound to the
loop that opened it (its SQLite threads resolve futures on it; PyMongo's async client
lives on it), so a loop per call would mean a connection per call. One loop per process
holds every ``SyncMonque``'s opened store for the life of the process.

The loop is made on first use and stopped at interpreter exit (``atexit``, registered when
``monque_engine`` is imported), after every
store still open on it was closed there, a dropped client's too (an SQLite store moves what
its producer left in the inbox as it closes). A ``fork``ed child never uses its parent's loop or anything opened on it (their
threads do not exist in the child, their connections belong to the parent): the child's
first call makes a loop of its own, and each client reopens its store there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import types
import weakref
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

from ..errors import ConnectionError
from .executor import DaemonThreadExecutor

T = TypeVar("T")

#: How long interpreter exit waits for the open clients to close on the loop.
EXIT_TIMEOUT = 10.0


class Client(Protocol):
    def _forget_after_fork(self) -> None: ...


class Store(Protocol):
    """What is opened on the loop (a ``Monque``): closed there at exit."""

    def close(self) -> Coroutine[Any, Any, None]: ...


class BackgroundLoop:
    """An event loop running in a daemon thread of this process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        #: Set at interpreter exit, once the open clients were closed: later calls raise.
        self.stopped = False
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(DaemonThreadExecutor())  # name look-ups work at exit too
        ready = threading.Event()
        self.thread = threading.Thread(target=self._main, args=(ready,), name="monque-sync-loop", daemon=True)
        self.thread.start()
        ready.wait()

    def _main(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(ready.set)
        while True:
            try:
                self.loop.run_forever()
            except (SystemExit, KeyboardInterrupt):
                # A task's (an async handler run inline in test mode called sys.exit): asyncio
                # lets those two out of run_forever, which ended this thread, and every later
                # call of every client in the process waited for ever. The task holds it as its
                # outcome, so it reaches the caller waiting on that work; the loop serves on,
                # unless exit is stopping it (the same turn may have run its stop).
                if self.stopped:
                    return
                continue
            return  # stop()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and return its result in the calling thread, or raise its
        error there: the same exception object, with the engine's frames as its traceback
        and not the hand-over's."""
        if self.stopped:
            coro.close()
            raise ConnectionError(
                "SyncMonque was called after interpreter exit closed its clients (an atexit handler "
                "registered before monque_engine was imported runs after that); call it earlier, or "
                "register the handler after importing monque_engine"
            )
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError(
                "a SyncMonque was called from its own event loop's thread (a listener or task on it); "
                "use the async Monque there"
            )
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException as error:
            if not future.done():  # the caller was interrupted (Ctrl-C) while it waited
                future.cancel()
                raise
            raise error.with_traceback(_engine_frames(error.__traceback__)) from error.__cause__

    def stop(self) -> None:
        self.stopped = True  # first: a call made from now on would wait on a stopped loop for ever
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(EXIT_TIMEOUT)
        if not self.thread.is_alive():
            self.loop.close()


def _engine_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without its leading frames: the caller's ``run`` and ``concurrent.futures``'s
    hand-over (Python puts the raising frame back in front)."""
    if tb is not None:
        tb = tb.tb_next  # run() itself
    while tb is not None and tb.tb_frame.f_code.co_filename == concurrent.futures._base.__file__:
        tb = tb.tb_next
    return tb


_lock = threading.Lock()
_current: BackgroundLoop | None = None
#: The clients, told of a fork (weakly: a client may be dropped at any time).
_clients: weakref.WeakSet[Client] = weakref.WeakSet()
#: What is open on this process's loop, held until closed: a client dropped without
#: ``close()`` still has its store closed at exit (SQLite: its inbox rows moved).
_open: set[Store] = set()
#: What a forked child inherited from its parent (the loop, the open stores): kept alive and
#: never touched, so that no connection of the parent is closed or used by the child.
inherited: list[object] = []


def background_loop() -> BackgroundLoop:
    """This process's loop, made on first use (and anew in a forked child)."""
    global _current
    current = _current
    if current is not None and current.pid == os.getpid():
        return current
    with _lock:
        if _current is None or _current.pid != os.getpid():
            _current = BackgroundLoop()
        return _current


def track(client: Client) -> None:
    _clients.add(client)


def opened(store: Store) -> None:
    _open.add(store)


def closed(store: Store) -> None:
    _open.discard(store)


def _after_fork_in_child() -> None:
    global _current, _lock
    _lock = threading.Lock()  # a parent thread may have held it at the fork
    inherited.extend([_current, *_open])
    _open.clear()
    _current = None
    for client in list(_clients):
        client._forget_after_fork()


def close_all_at_exit() -> None:
    """Close what is open on the loop, then stop it (``monque_engine``'s ``atexit`` handler)."""
    current = _current
    if current is None or current.pid != os.getpid() or current.loop.is_closed():
        return
    stores = list(_open)
    _open.clear()
    if stores:

        async def close_all() -> None:
            await asyncio.gather(*(store.close() for store in stores), return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(close_all(), current.loop).result(EXIT_TIMEOUT)
        except Exception:  # noqa: BLE001 - exiting: what could not close is left as a crash leaves it
            pass
    current.stop()


os.register_at_fork(after_in_child=_after_fork_in_child)
