"""A stop that reaches an --app's setup while it blocks the event loop.

A stop signal reaches the worker through the event loop (``loop.add_signal_handler``): a
setup that blocks the loop (a sync ``def setup`` waiting on a socket, ``time.sleep``, or an
``async def`` calling a blocking client) left the worker deaf to SIGTERM and SIGINT, the
second included: only SIGKILL ended it. Nothing is claimed before the setup returns, so a
stop then has nothing to finish.

While the setup runs, each stop signal's Python-level handler (which runs in the main thread
between bytecodes, whatever the loop is doing) raises ``SetupInterrupted`` when it finds the
setup's own frame on the stack it interrupts, i.e. when the setup is running rather than
awaiting: the blocking call is interrupted as Ctrl-C interrupts a script, the setup's task
ends with it, and the worker closes its store and exits 0. A setup that awaits leaves the
loop free: the signal then goes the usual way (``runner._unless_stopped`` cancels it).

A ``--processes`` child hears its supervisor's stop over the lifeline, not as a signal, and
that request reaches the worker through the loop too: a blocking setup held it until the
group's --shutdown-timeout, then the supervisor killed the child and exited 5.
``LifelineStop`` turns such a request into the signal above when the loop does not answer.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


class SetupInterrupted(BaseException):
    """A stop signal interrupted the app's setup while it ran (a ``BaseException``, as
    ``KeyboardInterrupt``: the setup's own ``except Exception`` does not swallow it)."""

    def __init__(self, sig: int) -> None:
        super().__init__(signal.Signals(sig).name)
        self.signal_name = signal.Signals(sig).name


@contextmanager
def interruptible(setup: Callable[..., Any], signals: tuple[signal.Signals, ...]) -> Iterator[None]:
    """While the block runs, ``signals`` interrupt ``setup`` where it runs (see the module)."""
    code = getattr(setup, "__code__", None)
    if code is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        walk = frame
        while walk is not None:
            if walk.f_code is code:
                raise SetupInterrupted(signum)
            walk = walk.f_back
        earlier = previous.get(signum)
        if callable(earlier):  # asyncio's own (a no-op: the loop reads the signal from its wakeup fd)
            earlier(signum, frame)

    previous: dict[int, Any] = {}
    for sig in signals:
        previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for number, earlier in previous.items():
            if earlier is not None:
                signal.signal(number, earlier)


#: How long the supervisor's stop waits for the worker's loop to answer before it interrupts
#: the setup: a loop that is only busy answers within milliseconds.
LOOP_ANSWER_S = 0.5


class LifelineStop:
    """The supervisor's stop while the setup runs: interrupts the setup if it blocks the loop."""

    def __init__(self) -> None:
        self._running = threading.Event()
        #: The supervisor's words, for the worker's "stopped before it started" line.
        self.reason: str | None = None

    @contextmanager
    def setup_running(self) -> Iterator[None]:
        self._running.set()
        try:
            yield
        finally:
            self._running.clear()

    def request(self, loop: asyncio.AbstractEventLoop, why: str) -> None:
        """From the lifeline's thread, after the request was handed to the loop: if the setup
        runs and the loop does not answer within ``LOOP_ANSWER_S``, signal the main thread
        (SIGTERM), whose handler (``interruptible``) interrupts the setup where it blocks."""
        if not self._running.is_set():
            return
        self.reason = why
        answered = threading.Event()
        try:
            loop.call_soon_threadsafe(answered.set)
        except RuntimeError:  # the loop is closed: the worker stopped already
            return
        if not answered.wait(LOOP_ANSWER_S) and self._running.is_set():
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)


__all__ = ["LOOP_ANSWER_S", "LifelineStop", "SetupInterrupted", "interruptible"]
