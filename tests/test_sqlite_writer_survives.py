"""The store's write thread outlives what one batch meets. Under ``ulimit -v`` a MemoryError
ended it with the batch's callers waiting and every later write queued behind nobody: a
worker sat at "active=100" for ten minutes and ignored its first SIGINT (a resource-
exhaustion probe). Real SQLite store; the MemoryError is raised on purpose, once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from monque_engine import ConnectionError
from monque_engine.store import StoreOpenOptions
from monque_engine.store.sqlite import SqliteStore


async def test_a_batch_that_raises_fails_its_callers_and_the_next_write_runs(tmp_path: Path) -> None:
    store = SqliteStore.from_url(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open(StoreOpenOptions())
    try:
        writer = store._writer
        assert writer is not None
        real = writer._run_batch
        calls: list[int] = []

        def out_of_memory_once(conn: Any, batch: list[Any]) -> list[tuple[bool, Any]]:
            calls.append(len(batch))
            if len(calls) == 1:
                raise MemoryError
            return real(conn, batch)

        writer._run_batch = out_of_memory_once  # type: ignore[method-assign]
        with pytest.raises(ConnectionError, match="the store's thread failed: MemoryError"):
            await asyncio.wait_for(writer.submit(lambda conn: conn.execute("SELECT 1").fetchone()), 10)
        answer = await asyncio.wait_for(writer.submit(lambda conn: conn.execute("SELECT 2").fetchone()), 10)
        assert answer == (2,) and len(calls) == 2
    finally:
        await store.close()


async def test_a_thread_that_dies_outside_a_batch_fails_every_caller_and_the_store_says_so(tmp_path: Path) -> None:
    """A thread that dies anyway (its wait for work met the MemoryError) fails what is queued
    and every later write at once, and the store's health says why: the worker stayed
    "healthy" while every completion failed (a review)."""
    store = SqliteStore.from_url(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open(StoreOpenOptions())
    try:
        writer = store._writer
        assert writer is not None
        assert await asyncio.wait_for(writer.submit(lambda conn: conn.execute("SELECT 1").fetchone()), 10) == (1,)

        def out_of_memory() -> None:
            raise MemoryError

        writer._take = out_of_memory  # type: ignore[method-assign,assignment]
        # The thread waits in its current call for the next write, and dies in the call after:
        # a write queued by then fails with it, and one submitted later fails at once.
        failed: list[ConnectionError] = []
        for _ in range(3):
            try:
                await asyncio.wait_for(writer.submit(lambda conn: conn.execute("SELECT 2").fetchone()), 10)
            except ConnectionError as error:
                failed.append(error)
                break
        assert failed and "the store's thread failed: MemoryError" in str(failed[0])
        health = store.health_error()
        assert health is not None and "the store's thread failed" in str(health)
        with pytest.raises(ConnectionError, match="the store's thread failed"):
            writer.submit(lambda conn: None)
    finally:
        await store.close()
