"""The MongoDB store's bottom floor: the state every port shares and the plumbing each
port's methods send their documents through.

``MongoPlumbing`` holds the collection, the error translation (``_call`` and its display
and long-running variants), document decoding (``_job``, ``_readable``), the fleet side
collections, the selector-to-query step reads and management share, and the unique-key
index guard (intake, retry and the feed's rebuild after a drop all lean on it). The ports
(``intake``, ``claims``, ``liveness``, ``reads``, ``management``, ``fleet``, ``retention``,
``feed``, ``admin``) subclass it; ``store.MongoStore`` composes them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import pymongo
from bson import ObjectId
from pymongo import AsyncMongoClient
from pymongo.asynchronous.change_stream import AsyncChangeStream
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

from ...errors import ConnectionError, InvalidJobDocumentError
from ...job import Job
from ...timeutil import datetime_to_ms
from ..base import JobStore, StoreListFilter, StoreSelector
from ..bounds import WARNED_IDS_LIMIT
from . import documents as q
from .config import MongoSettings, mask_password, parse_mongo_url
from .errors import ErrorTranslator
from .index_build import MissingUniqueKeyIndexError, ensure_at_open
from .indexes import fleet_index_models, index_models
from .read_preference import read_preference, secondary_staleness_s

T = TypeVar("T")
#: What a missing unique-key index means once the store runs (index_build.refusal).
UNIQUE_REFUSAL_CONSEQUENCE = (
    "so since the collection was replaced (dropped or renamed) jobs with a unique key are not enqueued and "
    "no job is retried until the index exists (all other work goes on)"
)
LONG_TIMEOUT_HINT = "part of the selection may have changed; narrow the selector (by name or age) and run it again"
log = logging.getLogger("monque_engine.mongo")
#: Concurrent unique-key enqueues can both miss the upsert filter; the loser gets E11000
#: and re-reads. A re-read can miss too (the winner already finished), so try a few times.
UNIQUE_INSERT_ATTEMPTS = 3
#: Deadline for createIndexes at open and for bulk writes (cancel / retry / delete by
#: selector, retention purges): these may touch a whole collection and legitimately outlast
#: the 60 s socket timeout. ``pymongo.timeout`` replaces that timeout for the block and
#: sends the deadline as maxTimeMS, so the server stops when the client stops waiting.
LONG_OPERATION_TIMEOUT_S = 600.0
#: Closing a change stream (killCursors) and closing the client (endSessions) wait for
#: server selection, 30 s by default, with the primary gone; on close they get this long,
#: as a ``pymongo.timeout`` (the driver's own deadline, which server selection honours) and
#: an ``asyncio.timeout`` over it (whatever else hangs). A cursor left open is reaped by the
#: server after its idle timeout (10 min); sessions expire by themselves (issue 27 item 15).
CLOSE_TIMEOUT_S = 5.0


def _valid(job_id: str) -> bool:
    return isinstance(job_id, str) and ObjectId.is_valid(job_id)


class MongoPlumbing(JobStore):
    """The state and plumbing every port of ``MongoStore`` shares (see the module docstring)."""

    def __init__(
        self,
        target: str | MongoSettings | AsyncDatabase[Any] | AsyncCollection[Any],
        **url_options: Any,
    ) -> None:
        self._settings: MongoSettings | None = None
        self._given_db: AsyncDatabase[Any] | None = None
        self._given_collection: AsyncCollection[Any] | None = None
        if isinstance(target, str):
            target = parse_mongo_url(target, **url_options)
        elif url_options:
            raise TypeError("URL options (database=, server_selection_timeout_ms=, …) only apply to a URL")
        if isinstance(target, MongoSettings):
            self._settings = target
            self.display_url = target.display_url
            hosts, database = target.hosts, target.database
        elif isinstance(target, AsyncCollection):
            self._given_collection = target
            hosts, database = self._client_hosts(target.database.client), target.database.name
            self.display_url = f"mongodb://{hosts}/{database}"
            self.position_scope = self._scope_of(hosts, database, target.name)  # (a URL's: at open)
        elif isinstance(target, AsyncDatabase):
            self._given_db = target
            hosts, database = self._client_hosts(target.client), target.name
            self.display_url = f"mongodb://{hosts}/{database}"
        else:
            raise TypeError(
                "MongoStore takes a mongodb:// URL, an AsyncDatabase or an AsyncCollection "
                f"(pymongo's async API), not {type(target).__name__}"
            )
        self._hosts = hosts
        self._database_name = database
        self._client: AsyncMongoClient[Any] | None = None
        self._collection: AsyncCollection[Any] | None = None
        self._supports_transactions = False
        self._streams: set[AsyncChangeStream[Any]] = set()
        self._closing = False
        self._open_lock = asyncio.Lock()
        self._errors = ErrorTranslator(f"MongoDB {hosts}/{database}", self._mask)
        self._warned_ids: set[str] = set()
        #: Indexes found missing at open on a large collection (logged once; see index_build.py).
        self.missing_indexes: list[str] = []
        #: Where display reads go (read_preference.py); "primary" unless a console asks.
        self.display_read_preference = "primary"
        #: (create_indexes, retention_index) as opened: what a rebuild after a drop builds.
        self._index_policy = (False, False)
        #: Set while the collection (replaced by a rename) is large and lacks the unique-key
        #: index: unique-key writes are refused with this message (``_require_unique_index``).
        self._unique_refusal: str | None = None
        self._reindexing = asyncio.Lock()

    @staticmethod
    def _scope_of(hosts: str, database: str, collection: str) -> str:
        """``JobStore.position_scope``: the hosts as the URL writes them, database, collection."""
        return f"mongodb:{hosts}/{database}.{collection}"

    @staticmethod
    def _client_hosts(client: AsyncMongoClient[Any]) -> str:
        try:
            seeds = client.topology_description.server_descriptions().keys()
            return ",".join(f"{host}:{port}" for host, port in seeds) or "?"
        except Exception:  # noqa: BLE001 - only for display
            return "?"

    def _mask(self, text: str) -> str:
        return mask_password(text, self._settings.url) if self._settings is not None else text

    @property
    def supports_transactions(self) -> bool:
        """Whether ``insert_many`` runs in a transaction (replica set or sharded cluster)."""
        return self._supports_transactions

    async def _ensure_indexes(
        self, collection: AsyncCollection[Any], consequence: str = "so this process will not start"
    ) -> None:
        """The indexes at open, and again after the collection was dropped or renamed:
        built here only on a small collection; a large one is migrated first
        (index_build.py): a missing unique-key index refuses, others are logged."""
        retention = self._index_policy[1]
        with self._errors.guard("check the jobs collection's indexes"):
            self.missing_indexes = await ensure_at_open(
                collection,
                index_models(retention),
                f"MongoDB collection {self._database_name}.{collection.name}",
                self._migrate_hint(collection.name, retention),
                consequence,
            )
        with self._errors.guard("create the fleet collections' indexes"), pymongo.timeout(LONG_OPERATION_TIMEOUT_S):
            for kind, models in fleet_index_models().items():
                await collection.database[q.fleet_collections(collection.name)[kind]].create_indexes(models)

    async def _indexes_after_invalidate(self) -> None:
        """The collection was dropped or renamed (the change stream said ``invalidate``):
        its indexes went with it, the partial unique one included, and deduplication by
        unique key stayed off until a restart (issue 27 item 11). The open-time policy
        applies again: a dropped collection is empty, so everything is rebuilt at once; a
        large collection renamed into its place without the unique-key index cannot be
        indexed here (that is ``monque-tui migrate``'s job), so from then on unique-key
        writes are refused, with the fix, until the index exists (``_require_unique_index``
        looks again each time); everything else keeps running. Every process watching
        does this; createIndexes with the same keys is a no-op for all but the first."""
        collection = self._collection
        if collection is None or self._closing or not self._index_policy[0]:
            return
        async with self._reindexing:
            try:
                await self._ensure_indexes(collection, UNIQUE_REFUSAL_CONSEQUENCE)
            except MissingUniqueKeyIndexError as error:
                if self._unique_refusal is None:
                    log.warning("%s", error)
                self._unique_refusal = str(error)
                return
            except ConnectionError as error:
                # Unknown whether the index exists: unique-key writes look again first.
                self._unique_refusal = (
                    f"could not check the unique-key index after the collection was replaced: {error}"
                )
                log.warning(
                    "the jobs collection was dropped or renamed and its indexes could not be rebuilt: %s", error
                )
                return
        if self._unique_refusal is not None:
            log.warning("the unique-key index exists again: unique-key writes are accepted again")
        self._unique_refusal = None

    async def _require_unique_index(self) -> None:
        """Refuse a write that relies on the partial unique index while it is missing (see
        ``_indexes_after_invalidate``); one ``listIndexes`` per call while refusing, none
        otherwise."""
        if self._unique_refusal is None:
            return
        await self._indexes_after_invalidate()
        if self._unique_refusal is not None:
            raise ConnectionError(self._unique_refusal)

    def _migrate_hint(self, collection: str, retention: bool) -> str:
        flags = ("" if collection == "monque_jobs" else f" --collection {collection}") + (
            " --retention" if retention else ""
        )
        return f"monque-tui migrate {self.display_url}{flags} (or await MongoStore.build_indexes())"

    def _coll(self) -> AsyncCollection[Any]:
        if self._collection is None:
            raise ConnectionError(f"MongoDB store {self.display_url} is not open; call initialize() first")
        return self._collection

    async def _call(
        self, action: str, operation: Callable[[AsyncCollection[Any]], Awaitable[T]], timeout_hint: str | None = None
    ) -> T:
        collection = self._coll()
        with self._errors.guard(action, timeout_hint):
            return await operation(collection)

    async def _display_call(
        self, action: str, operation: Callable[[AsyncCollection[Any]], Awaitable[T]], timeout_hint: str | None = None
    ) -> T:
        """``_call`` for a read that only shows something (read_preference.py)."""
        collection = self._coll()
        if self.display_read_preference != "primary":
            collection = collection.with_options(read_preference=read_preference(self.display_read_preference))
        with self._errors.guard(action, timeout_hint):
            return await operation(collection)

    def set_display_read_preference(self, mode: str) -> None:
        """``"secondaryPreferred"`` sends display reads (listings, counts, statistics, health,
        error groups) to a secondary within 90 s of the primary, when there is one;
        ``"primary"`` (the default) back. ValueError for any other mode."""
        read_preference(mode)  # validates
        self.display_read_preference = mode

    def display_staleness_s(self) -> float | None:
        """How far behind the primary display reads may be, in seconds (estimated from the
        driver's monitoring); None when they go to the primary."""
        if self.display_read_preference == "primary" or self._collection is None:
            return None
        client = self._collection.database.client
        try:
            return secondary_staleness_s(client.topology_description, client.options.heartbeat_frequency)
        except (AttributeError, TypeError):
            return None

    async def _long_call(self, action: str, operation: Callable[[AsyncCollection[Any]], Awaitable[T]]) -> T:
        """``_call`` for a write that may touch a whole collection (LONG_OPERATION_TIMEOUT_S)."""
        with pymongo.timeout(LONG_OPERATION_TIMEOUT_S):
            return await self._call(action, operation, LONG_TIMEOUT_HINT)

    @staticmethod
    def _job(doc: Mapping[str, Any] | None) -> Job | None:
        """One document asked for by id: an unreadable one raises InvalidJobDocumentError."""
        return None if doc is None else Job.from_document(doc)

    def _readable(self, docs: Sequence[Mapping[str, Any]]) -> list[Job]:
        """Documents of a listing as jobs; an unreadable one (hand-written, or by another
        program) is skipped with one warning per document, so one bad document never
        stops a listing or a loop."""
        jobs: list[Job] = []
        for doc in docs:
            try:
                jobs.append(Job.from_document(doc))
            except InvalidJobDocumentError as error:
                self._warn_unreadable(error)
        return jobs

    def _warn_unreadable(self, error: InvalidJobDocumentError) -> None:
        if error.job_id is None or error.job_id in self._warned_ids:
            if error.job_id is None:
                log.warning("%s (in %s); skipped", error, self.display_url)
            return
        if len(self._warned_ids) >= WARNED_IDS_LIMIT:
            self._warned_ids.clear()
        self._warned_ids.add(error.job_id)
        log.warning("%s (in %s); skipped", error, self.display_url)

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        """A warning about one document, logged the first time only (``WARNED_IDS_LIMIT``)."""
        if key in self._warned_ids:
            return
        if len(self._warned_ids) >= WARNED_IDS_LIMIT:
            self._warned_ids.clear()
        self._warned_ids.add(key)
        log.warning(message, *args)

    async def _suffix_ids(self, filter: StoreListFilter, display: bool = True) -> list[Any] | None:
        """For an id-like search: the ids ending with it, by their own index-only query
        (``documents.id_suffix_query``), so the listing's ``$or`` stays indexed. None when
        the search is not id-like, or when more than ``ID_SUFFIX_LIMIT`` ids end with it (a
        suffix of 1-3 digits): the exact ``$expr`` then stays in the ``$or``, so a listing,
        its count and a bulk action all reach every match (a listing once kept the oldest
        1,000 and counted 1,000 of 1,100, where the bulk call on it counted 1,100).
        ``display=False``: for a bulk action, read on the primary like the action itself."""
        if not filter.search or not q.id_like(filter.search):
            return None
        query = q.id_suffix_query(filter.search)
        limit = q.ID_SUFFIX_LIMIT + 1
        call = self._display_call if display else self._call
        docs = await call(
            "search job ids",
            lambda c: (
                c.find(query, {"_id": 1})
                .hint(q.ID_INDEX_HINT)
                .limit(limit)
                .max_time_ms(q.LIST_MAX_TIME_MS)
                .to_list(None)
            ),
            q.LIST_TIMEOUT_HINT,
        )
        if len(docs) > q.ID_SUFFIX_LIMIT:
            return None
        return [doc["_id"] for doc in docs]

    @staticmethod
    def _list_hint(filter: StoreListFilter) -> str:
        return q.TEXT_TIMEOUT_HINT if filter.text or filter.data else q.LIST_TIMEOUT_HINT

    async def _aggregate(
        self,
        pipeline: list[dict[str, Any]],
        hint: list[tuple[str, int]] | None = None,
        action: str = "compute queue statistics",
    ) -> list[dict[str, Any]]:
        options: dict[str, Any] = {"maxTimeMS": q.STATS_MAX_TIME_MS}
        if hint is not None:
            options["hint"] = hint

        async def run(c: AsyncCollection[Any]) -> list[dict[str, Any]]:
            cursor = await c.aggregate(pipeline, **options)
            return await cursor.to_list(None)

        return await self._display_call(action, run)

    async def _selector_query(self, selector: StoreSelector) -> dict[str, Any]:
        """``documents.selector_filter``, with an id-like search of its listing matched by
        the ids ending with it, found by their own index-only query first, as a listing
        does (``_suffix_ids``; the ``$expr`` inside the ``$or`` made every branch a
        collection scan). A bulk action must reach every match, so when the suffix matches
        more ids than that query returns (``ID_SUFFIX_LIMIT``: a suffix of 1-3 digits) the
        exact ``$expr`` stays, under the bulk deadline. The ``as_of`` bound is unchanged."""
        listing = selector.listing
        if listing is None:
            return q.selector_filter(selector)
        return q.selector_filter(selector, await self._suffix_ids(listing, display=False))

    def _side(self, kind: str) -> AsyncCollection[Any]:
        collection = self._coll()
        return collection.database[q.fleet_collections(collection.name)[kind]]

    async def _side_call(self, kind: str, action: str, operation: Callable[[AsyncCollection[Any]], Awaitable[T]]) -> T:
        side = self._side(kind)
        with self._errors.guard(action):
            return await operation(side)


async def _bounded_close(closing: Awaitable[None], what: str) -> None:
    """Await a driver close for at most ``CLOSE_TIMEOUT_S`` (see there); never raises but
    for the caller's own cancellation."""
    try:
        with pymongo.timeout(CLOSE_TIMEOUT_S):
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await closing
    except TimeoutError:
        log.warning("closing %s took over %.0f s (server unreachable?); gave up on it", what, CLOSE_TIMEOUT_S)
    except Exception as error:  # noqa: BLE001 - closing anyway; a driver timeout lands here too
        log.debug("closing %s failed: %s", what, error)


def _ms_or_none(value: Any) -> int | None:
    return datetime_to_ms(value) if isinstance(value, datetime) else None


def _int_or_none(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None
