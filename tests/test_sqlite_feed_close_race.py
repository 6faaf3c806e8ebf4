"""A stream whose pull is under way when the SQLite store closes ends, as one between pulls does.

The close ends the streams, then cuts the streams' reader short; a stream whose pull was
running then raised "… was closed while this read ran" (``ConnectionError``) into its
consumer instead of ending, a race the feed contract's ``test_stream_ends_when_the_store_closes``
lost about once in a few hundred runs (CI, 2026-12-06). Here the pull is held inside the
reader's thread until the close cuts it short, as SQLite's interrupt does, so the race is
lost every time.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from monque_engine import Monque
from monque_engine.store.sqlite.feed import ChangeFeed


@pytest.mark.parametrize("kind", ["events", "rows"])
async def test_a_stream_pulling_when_the_store_closes_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """``events``: ``open_watch`` (ChangeEvents); ``rows``: the console's ``open_watch_rows``."""
    monque = Monque(f"sqlite:///{tmp_path / 'jobs.db'}")
    await monque.initialize()
    store: Any = monque.store
    stream = await (monque.open_watch() if kind == "events" else store.open_watch_rows())
    reader = store._feed._reader
    pulling = threading.Event()

    def pull_cut_short_by_the_close(self: ChangeFeed, conn: sqlite3.Connection, **_: Any) -> Any:
        pulling.set()
        assert reader._abandon.wait(30), "the store never closed"
        raise sqlite3.OperationalError("interrupted")  # what SQLite raises for an interrupted read

    monkeypatch.setattr(ChangeFeed, "_pull" if kind == "events" else "_pull_rows", pull_cut_short_by_the_close)
    waiter = asyncio.ensure_future(stream.__anext__())
    assert await asyncio.to_thread(pulling.wait, 30)
    await monque.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiter, 30)
