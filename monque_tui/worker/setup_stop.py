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
"""

from __future__ import annotations

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


__all__ = ["SetupInterrupted", "interruptible"]
