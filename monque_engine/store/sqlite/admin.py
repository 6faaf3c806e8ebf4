"""The Admin port on SQLite: opening the store (preflight, the file's identity, the
runners, the schema checked or migrated, the inbox a crashed producer left, the change feed,
the maintenance task) and closing it. How connections are made is in ``connect.py``, the
schema's checks and upgrades in ``migrations.py``; the store keeps its state, this module
the work of opening and closing it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
from typing import Any, Protocol

from ...daemon_call import call_in_thread
from ...errors import ConnectionError, StoreLostError
from ..base import StoreOpenOptions
from . import connect, heldfiles, maintenance, migrations
from .completions import Completions
from .feed import ChangeFeed
from .identity import FileIdentity
from .inbox import Inbox, InboxProducer, InboxView
from .intake import Intake
from .journal import Journal
from .runner import ReadRunner, WriteRunner
from .schema import Tables
from .statements import Prepared
from .url import SqliteSettings


class StoreState(Protocol):
    """What opening and closing touch of ``store.SqliteStore``: its state, typed here so
    this module need not import the store that imports it (no import circle)."""

    settings: SqliteSettings
    _open_lock: asyncio.Lock
    _file: str
    _tables: Tables | None
    _journal: Journal | None
    _prepared: Prepared | None
    _intake: Intake | None
    _on_fatal: Any
    _identity: FileIdentity
    _writer: WriteRunner | None
    _reader: ReadRunner | None
    _feed: ChangeFeed | None
    _maintenance: asyncio.Task[None] | None
    _producer: InboxProducer | None
    _inbox_view: InboxView | None
    _batch: Completions
    position_scope: str
    upgraded_from: int | None

    def _describe(self) -> str: ...

    def _committed(self) -> None: ...

    def health_error(self) -> ConnectionError | None: ...

    async def close(self) -> None: ...

    async def prune_feed(self) -> int: ...


async def open_store(store: StoreState, options: StoreOpenOptions) -> None:
    """Open ``store`` (``SqliteStore.open``): its tables' names and statements, the file's
    identity, the runners, the schema checked or prepared, the inbox, the change feed, and
    the maintenance task; a failure closes what was opened and says why in one line."""
    async with store._open_lock:
        if store._writer is not None:
            return
        connect.preflight(store.settings)
        store._file = os.path.abspath(store.settings.path)
        loop = asyncio.get_running_loop()
        store._tables = tables = Tables(options.collection_name)
        store._journal = journal = Journal(tables)
        store._prepared = prepared = Prepared(tables)
        store._intake = Intake(tables, journal, prepared)
        store._on_fatal = options.on_fatal
        store._identity = identity = FileIdentity(store._file, store.settings.path)
        identity.on_lost(lambda error: report_lost(store, loop, error))
        runners = connect.Runners(loop, store.settings, store._file, store._describe, identity)
        try:
            if store.settings.read_only:
                store._reader = runners.reader()
                where = store.settings.path
                store_id = await store._reader.run(lambda conn: migrations.check_readable(conn, tables, where))
                identity.capture()
                store._inbox_view = InboxView(tables)
            else:
                await call_in_thread(connect.probe, store.settings, tables)
                where, r_index = store.settings.path, options.retention_index
                store._writer = runners.writer(store._committed)
                inbox = Inbox(tables, journal)

                def prepare(conn: sqlite3.Connection) -> migrations.Prepared:
                    # Check (again, now under the write lock), upgrade and create, in one transaction.
                    made = migrations.prepare(
                        conn, tables, where, create_indexes=options.create_indexes, retention_index=r_index
                    )
                    # A producer that crashed mid-streak left committed jobs in the inbox:
                    # the next writable opener moves them, though it may only ever read.
                    inbox.absorb(conn)
                    return made

                store_id, store.upgraded_from = await store._writer.run(prepare)
                identity.capture()
                store._producer = producer = InboxProducer(inbox, store._writer, store.health_error)
                store._inbox_view = InboxView(tables)  # reads see queued jobs without absorbing
                store._writer.absorb_first(producer.absorb)
                store._batch.attach(store._writer, tables, journal)
                store._reader = runners.reader()
            # A collection no writable open of this code has seen has no id yet: its file
            # and table name stand in (the file could since have been recreated: rare, and
            # read-only opens cannot act anyway).
            store.position_scope = f"sqlite:{store_id}" if store_id else f"sqlite:{store._file}#{tables.jobs}"
            store._feed = ChangeFeed(
                loop,
                runners.reading,
                functools.partial(runners.reader, 1),
                tables,
                store.settings.feed_interval,
                on_inbox=None if store._producer is None else store._producer.absorb_soon,
                damaged=identity.damaged,
            )
        except BaseException as error:
            await store.close()
            explained = connect.explain_open_error(store.settings, error, store._describe)
            if explained is None:
                raise
            raised, cause = explained
            raise raised from cause
        store._maintenance = loop.create_task(
            maintenance.maintain(store.settings, store.health_error, store.prune_feed),
            name="monque-sqlite-maintenance",
        )


def report_lost(store: StoreState, loop: asyncio.AbstractEventLoop, error: StoreLostError) -> None:
    """Called once, from whichever thread noticed: hand the news to the loop's listener."""
    listener = store._on_fatal
    if listener is None:
        return
    try:  # always deferred: the news may be found inside a caller that is mid-operation
        loop.call_soon_threadsafe(listener, error)
    except RuntimeError:  # the loop is closed: nobody is listening any more
        pass


async def close_store(store: StoreState) -> None:
    """Close ``store`` (``SqliteStore.close``); idempotent."""
    producer = store._producer
    if producer is not None:
        producer.closing = True  # other tasks may enqueue while this awaits: into the job table
    try:
        await _close(store)
    finally:
        if producer is not None:
            producer.closing = False


async def _close(store: StoreState) -> None:
    producer, store._producer = store._producer, None
    if producer is not None:
        await producer.absorb_before_close()
        producer.detach()
    store._batch.close()
    if store._maintenance is not None:
        store._maintenance.cancel()
        store._maintenance = None
    feed, store._feed = store._feed, None
    if feed is not None:
        feed.end_streams()
    store._inbox_view = None
    writer, store._writer = store._writer, None
    reader, store._reader = store._reader, None
    for part in (feed, reader, writer):
        if part is not None:
            await call_in_thread(part.close)
    store._identity.close()
    heldfiles.close_unreachable()  # this store's connections were the file's last: -shm is gone
    if store._file is not None:
        heldfiles.close_if_unused(store._file)
