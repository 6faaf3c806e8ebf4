"""Handlers for the worker-mode tests, in the setup-function form.

The module asserts at import, and again in ``setup`` and in a handler, that Textual is not
loaded: the worker mode must run where Textual is not installed.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from monque_engine import Job, Monque

assert "textual" not in sys.modules, "textual was imported before the worker loaded its app"


async def fast(job: Job) -> None:
    await asyncio.sleep(0.01)


async def slow(job: Job) -> None:
    await asyncio.sleep(float(job.data["seconds"]))


def sync_fast(job: Job) -> None:
    time.sleep(0.01)


def sync_slow(job: Job) -> None:
    time.sleep(float(job.data["seconds"]))


async def loop_blocker(job: Job) -> None:
    """Blocks the event loop (an async handler calling a blocking function): no await."""
    time.sleep(float(job.data["seconds"]))


def poison(job: Job) -> None:
    """Kills its process as soon as it runs, as a crash in a C extension would."""
    os._exit(9)


async def stubborn(job: Job) -> None:
    """Swallows every cancellation (as some libraries do) and keeps going."""
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue


async def gated(job: Job) -> None:
    """Runs until the file named by ``job.data["gate"]`` exists: a test holds slots with it."""
    while not os.path.exists(job.data["gate"]):
        await asyncio.sleep(0.02)


async def boom(job: Job) -> None:
    raise RuntimeError(f"boom {job.data}")


async def textual_check(job: Job) -> None:
    if "textual" in sys.modules:
        raise AssertionError("textual is imported in worker mode")


def setup(monque: Monque) -> None:
    assert "textual" not in sys.modules, "textual was imported before setup ran"
    monque.register("fast", fast)
    monque.register("slow", slow)
    monque.register("sync.fast", sync_fast)
    monque.register("sync.slow", sync_slow)
    monque.register("boom", boom)
    monque.register("gated", gated)
    monque.register("stubborn", stubborn)
    monque.register("loop.blocker", loop_blocker)
    monque.register("poison", poison)
    monque.register("textual.check", textual_check)


async def async_setup(monque: Monque) -> None:
    await asyncio.sleep(0)
    setup(monque)


def no_handlers(monque: Monque) -> None:
    """Registers nothing: the worker must refuse to start."""


def failing_setup(monque: Monque) -> None:
    raise ValueError("setup could not reach the mail server")


NOT_AN_APP = 42
