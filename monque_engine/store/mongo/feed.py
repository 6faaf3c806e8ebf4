"""The Feed port on MongoDB (``MongoFeed.open_watch``: a change stream of the jobs
collection), and reading that stream: what each way PyMongo's stream can end means to us.

PyMongo's ``AsyncChangeStream`` (pymongo/asynchronous/change_stream.py) resumes by itself
once after a resumable error, closes itself after a fatal one or once the server closed
its cursor, and leaves itself open after a timeout. We loop on ``try_next()`` (one getMore
per call) under ``alive`` exactly as its ``next()`` does, but each call gets its own
``timeoutMS`` budget: ``next()`` spends one budget across all the empty getMores of an
idle stream, so with ``timeoutMS`` in the URL every quiet period would end in a timeout
and a resume. This module turns the outcomes into what the scheduler's feed loop acts on:

* an ``invalidate`` event (the collection or its database was dropped or renamed; the
  server closes the cursor right after it): ``CollectionInvalidatedError``, a
  ``ChangeFeedHistoryLostError``, so the caller reopens *without* its token, since
  resuming from a token before the drop replays it; the store rebuilds the collection's
  indexes first (a dropped collection lost them, the partial unique one included);
* the stream no longer ``alive`` (where ``next()`` raises StopAsyncIteration) while the
  store is not closing, i.e. the server ended the cursor under us: ``ConnectionError``,
  never a quiet end that would read as "store closed" while the feed state still says
  live. While closing: the feed just ends;
* a timeout on an open stream while ``timeoutMS`` governs the wait (``timeout_governs``:
  set on the client): no change yet, keep waiting, since each wait has that budget and an
  idle one spends it. Without ``timeoutMS`` a timeout is the socket's
  (``socketTimeoutMS``): the server did not answer a getMore that it answers within
  ``maxAwaitTimeMS`` when all is well, so the connection is dead or half-open and that is
  reported (counting it as idle kept a dead feed "live" forever; issue 27 item 10). A
  server-selection timeout is never idleness: the server is gone;
* any other driver error: ``ConnectionError`` (the caller reopens with its last token).

``try_next()`` returns a buffered document without suspending (only a getMore awaits the
network), so a batch of thousands of changes would be consumed in one go with the event
loop blocked: heartbeats late, handlers starved. We yield to the loop after every change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from pymongo.asynchronous.change_stream import AsyncChangeStream
from pymongo.errors import PyMongoError, ServerSelectionTimeoutError

from ...errors import ChangeFeedHistoryLostError, ConnectionError, InvalidCursorError
from ...job import ChangeEvent, JobStatus
from .changes import change_to_event, needs_post_image, watch_pipeline
from .errors import ErrorTranslator
from .plumbing import MongoPlumbing, _bounded_close

#: Operations after which the watched collection is gone (the server sends ``invalidate``
#: after each and closes the cursor; the worker's pipeline passes only ``invalidate``).
COLLECTION_GONE = frozenset({"invalidate", "drop", "rename", "dropDatabase"})


class CollectionInvalidatedError(ChangeFeedHistoryLostError):
    """The jobs collection was dropped or renamed: history lost, and its indexes too (the
    store rebuilds them before this reaches the caller; issue 27 item 11)."""


async def read_changes(
    stream: AsyncChangeStream[Any],
    include_job: bool,
    display_url: str,
    closing: Callable[[], bool],
    errors: ErrorTranslator,
    timeout_governs: bool = True,
) -> AsyncIterator[ChangeEvent]:
    """The stream's events as ChangeEvents, until it ends in one of the ways above."""
    while True:
        if not stream.alive:  # where next() would raise StopAsyncIteration
            if closing():
                return
            raise ConnectionError(
                f"The change stream on {display_url} ended: the server closed its cursor; reopen the watch"
            )
        try:
            change = await stream.try_next()
        except PyMongoError as error:
            if closing():
                return
            if timeout_governs and is_idle_timeout(stream, error):
                continue
            raise errors.translate("read the change stream", error) from error
        if change is None:
            continue  # an empty batch: the server waited maxAwaitTimeMS and saw no change
        if change.get("operationType") in COLLECTION_GONE:
            raise CollectionInvalidatedError(
                f"The change stream on {display_url} was invalidated: the jobs collection or its database was "
                "dropped or renamed; watch again without the old resume token (resuming from it would replay "
                "the drop) and reload the full state"
            )
        event = change_to_event(change, include_job)
        if event is not None:
            yield event
        # A buffered change came back without the loop running: let it run (see above).
        await asyncio.sleep(0)


def is_idle_timeout(stream: AsyncChangeStream[Any], error: PyMongoError) -> bool:
    """A ``next()`` that timed out on an open stream without losing the server."""
    return error.timeout and not isinstance(error, ServerSelectionTimeoutError) and stream.alive


class MongoFeed(MongoPlumbing):
    """``JobStore``'s change feed on MongoDB (composed into ``MongoStore``)."""

    #: Every worker of a name hears the same insert at the same moment; the scheduler
    #: spreads their wake-ups over up to this many seconds (``lifecycle.WAKE_JITTER_MAX_S``)
    #: so they do not all race for the same first document (issue 36 item 6).
    wake_jitter_s = 0.025

    async def open_watch(
        self,
        resume_after: Any = None,
        *,
        full_document: bool = True,
        statuses: tuple[JobStatus, ...] | None = None,
        names: tuple[str, ...] | None = None,
    ) -> AsyncIterator[ChangeEvent]:
        """Open a change stream now (errors, including "standalone server", raise here).

        ``resume_after`` is a ``ChangeEvent.token`` from this store (a resume-token document).
        ``names`` narrows a status-filtered stream in the server's ``$match`` (changes.py).
        """
        if resume_after is not None and not isinstance(resume_after, Mapping):
            raise InvalidCursorError(
                f"Resume token {resume_after!r} is not one this store made; pass ChangeEvent.token from a previous watch"
            )
        pipeline = watch_pipeline(full_document, statuses, names)
        lookup = "updateLookup" if needs_post_image(full_document, statuses) else None
        stream = await self._call(
            "open the change stream",
            lambda c: c.watch(pipeline, full_document=lookup, resume_after=resume_after),
        )
        self._streams.add(stream)
        return ChangeIterator(self._changes(stream, full_document), stream)

    def _timeout_governs(self) -> bool:
        """Whether the client has ``timeoutMS`` (each change-stream wait then has its budget)."""
        collection = self._collection
        if collection is None:
            return False
        try:
            return collection.database.client.options.timeout is not None
        except AttributeError:
            return False

    async def _changes(self, stream: AsyncChangeStream[Any], include_job: bool) -> AsyncIterator[ChangeEvent]:
        """The stream's events until it breaks or the store closes (see ``feed.read_changes``);
        the stream is closed and forgotten however the iteration ends."""
        try:
            governs = self._timeout_governs()
            async for event in read_changes(
                stream, include_job, self.display_url, lambda: self._closing, self._errors, governs
            ):
                yield event
        except CollectionInvalidatedError:
            await self._indexes_after_invalidate()
            raise
        finally:
            self._streams.discard(stream)
            await _bounded_close(stream.close(), "a change stream (killCursors)")


class ChangeIterator:
    """The change events of one stream, and ``resume_token``: where to resume it.

    That is PyMongo's ``AsyncChangeStream.resume_token``, not the last event's ``_id``: the
    driver advances it to each batch's ``postBatchResumeToken``, also over empty batches,
    so after a quiet spell on a filtered stream a reconnect resumes from the last batch the
    server answered, not from the last event delivered hours ago (a long oplog rescan, or
    "history lost" once that event left the oplog; issue 27 item 9). ``ResilientWatch``
    reads it when it reopens."""

    def __init__(self, events: AsyncIterator[ChangeEvent], stream: AsyncChangeStream[Any]) -> None:
        self._events = events
        self._stream = stream

    @property
    def resume_token(self) -> Any:
        return self._stream.resume_token

    def __aiter__(self) -> ChangeIterator:
        return self

    async def __anext__(self) -> ChangeEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        close = getattr(self._events, "aclose", None)
        if close is not None:
            await close()
