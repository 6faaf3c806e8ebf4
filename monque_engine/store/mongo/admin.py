"""The Admin port on MongoDB: opening the store (the first ping, the server's version and
topology, the indexes at open), building the indexes a deploy step migrates
(``build_indexes``, what ``monque-tui migrate`` runs), and closing it, bounded however
unreachable the server is.

The store owns its client only when it made one from a URL; a database or collection the
host application passed in is borrowed and never closed. MongoDB keeps no counts of its
own, so there is no ``repair_counts`` here (``JobStore``'s default says so).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pymongo
from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import PyMongoError

from ...errors import ConnectionError
from ..base import StoreOpenOptions
from . import documents as q
from .config import DEFAULT_SERVER_SELECTION_TIMEOUT_MS
from .index_build import Progress, build_indexes, unbounded
from .indexes import fleet_index_models, index_models
from .plumbing import MongoPlumbing, _bounded_close
from .server import inspect_server


class MongoAdmin(MongoPlumbing):
    """``JobStore``'s life cycle on MongoDB (composed into ``MongoStore``)."""

    async def open(self, options: StoreOpenOptions) -> None:
        async with self._open_lock:
            if self._collection is not None:
                return
            self._closing = False
            try:
                collection = await self._connect(options)
                # Its hosts as the URL names them, database and collection: a bulk count's
                # position (a time here) bounds only this collection's jobs.
                name = getattr(collection, "name", options.collection_name)
                self.position_scope = self._scope_of(self._hosts, self._database_name, name)
                admin = collection.database.client.admin
                with self._errors.guard("read the server's version and topology"):
                    server = await inspect_server(admin.command, f"MongoDB at {self._hosts}")
                self._supports_transactions = server.supports_transactions
                self._index_policy = (options.create_indexes, options.retention_index)
                self._unique_refusal = None
                if options.create_indexes:
                    await self._ensure_indexes(collection)
            except BaseException:
                await self._release_client()
                raise
            self._collection = collection

    async def build_indexes(self, progress: Progress | None = None, *, retention: bool = False) -> int:
        """Build the missing indexes of the jobs collection (and its side collections), all
        in one ``createIndexes``, with no deadline and no socket timeout (index_build.py),
        calling ``progress`` before and after: the deploy step ``monque-tui migrate`` runs.
        ``retention``: the retention index too (what ``job_retention`` needs). Returns how
        many jobs-collection indexes were built."""
        report = progress if progress is not None else (lambda *_: None)
        with self._errors.guard("build the jobs collection's indexes"):
            async with unbounded(self._coll(), self._settings) as collection:
                built = await build_indexes(collection, index_models(retention), report)
                for kind, models in fleet_index_models().items():
                    await collection.database[q.fleet_collections(collection.name)[kind]].create_indexes(models)
        self.missing_indexes = []
        return built

    async def _connect(self, options: StoreOpenOptions) -> AsyncCollection[Any]:
        if self._given_collection is not None:
            database = self._given_collection.database
            collection = self._given_collection
        else:
            self.check_collection_name(options.collection_name)  # before a client is made
            database = self._given_db if self._given_db is not None else self._new_client()[self._database_name]
            collection = database[options.collection_name]
        try:
            # Only this first ping is bounded this tightly (see config.py); pymongo.timeout
            # applies to server selection too and leaves the client's own settings alone.
            with pymongo.timeout(self._ping_timeout_ms() / 1000):
                await database.command("ping")
        except PyMongoError as error:
            raise ConnectionError(self._unreachable(error)) from error
        return collection

    def _ping_timeout_ms(self) -> int:
        settings = self._settings
        return settings.server_selection_timeout_ms if settings is not None else DEFAULT_SERVER_SELECTION_TIMEOUT_MS

    def _new_client(self) -> AsyncMongoClient[Any]:
        settings = self._settings
        assert settings is not None
        try:
            self._client = AsyncMongoClient(settings.url, **settings.driver_kwargs())
        except (PyMongoError, ValueError, TypeError) as error:
            raise ConnectionError(
                f"Invalid MongoDB URL or option for {settings.display_url}: {self._mask(str(error))}"
            ) from error
        return self._client

    def _unreachable(self, error: BaseException) -> str:
        timeout = f" within {self._ping_timeout_ms()} ms"
        return (
            f"Cannot reach MongoDB at {self._hosts} (database {self._database_name}){timeout}: "
            f"{self._mask(str(error).split(', Timeout: ')[0])}; check that the server is running and reachable, the host and port, "
            "credentials and TLS settings (the wait is serverSelectionTimeoutMS in the URL)"
        )

    async def _release_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await _bounded_close(client.close(), "the MongoDB client (endSessions)")

    async def close(self) -> None:
        """Close the change streams and the client; bounded (``CLOSE_TIMEOUT_S`` for the
        streams together, then for the client) however unreachable the server is."""
        self._closing = True
        streams, self._streams = list(self._streams), set()
        await asyncio.gather(*(_bounded_close(stream.close(), "a change stream (killCursors)") for stream in streams))
        self._collection = None
        await self._release_client()
