"""Building the jobs collection's indexes: a step of its own before a deploy, not every open.

Every ``open()`` used to run ``createIndexes`` with the full list. On an existing 10M-job
collection (a first Python deploy next to Node Monque) that built the console's extra
indexes while all 20 workers waited in ``initialize()``, or failed at the 600 s deadline
(issue 27). Now:

* ``build_indexes`` (``monque-tui migrate``, ``MongoStore.build_indexes``) builds all the
  missing ones in one ``createIndexes`` (one collection scan for all of them, where one
  command per index scanned 10M documents once per index), reporting each, with no
  deadline and no socket timeout (``unbounded``);
* ``open()`` lists the indexes (one cheap command). Missing ones on a small collection
  (at most ``BUILD_AT_OPEN_MAX_DOCS``, by the collection's metadata count) are built
  there and then, as before: a new deployment needs no extra step. On a larger one it does
  not build: a missing unique-key index refuses the open with a clear message (without
  it two workers can store the same unique key twice), any other missing index is logged
  once and the store runs without it (only slower queries).

Indexes are compared by key pattern, so an index Node Monque (or an operator) created
under another name counts as present.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import pymongo
from pymongo import AsyncMongoClient, IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from ...errors import ConnectionError
from .config import MongoSettings

log = logging.getLogger("monque_engine.mongo")

#: Up to this many documents a missing index is built at open (seconds at most).
BUILD_AT_OPEN_MAX_DOCS = 100_000
#: The index whose absence is not safe: deduplication by unique key rests on it.
UNIQUE_KEY_INDEX = (("name", 1), ("uniqueKey", 1))

#: The deadline of a build at open (small collections only): far above what 100,000
#: documents take, and a deadline, so a hung server cannot hold a worker's start forever.
OPEN_BUILD_DEADLINE_S = 600.0
#: A build on a client the host application lent us, whose socket timeout we cannot lift
#: without copying its options (no public API does): a deadline of a day instead.
BORROWED_BUILD_DEADLINE_S = 24 * 3600.0
_TIMEOUT_OPTIONS = ("sockettimeoutms", "timeoutms")

#: progress(position, count, index name, state): state is "present", "building" or
#: "built in 12.3 s" (with "(one build of 3 indexes)" when built together).
Progress = Callable[[int, int, str, str], None]


def _pattern(keys: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (field, int(direction) if isinstance(direction, int | float) else direction)
        for field, direction in keys.items()
    )


async def existing_patterns(collection: AsyncCollection[Any]) -> set[tuple[tuple[str, Any], ...]]:
    """Key patterns of the collection's indexes (none when it does not exist yet)."""
    cursor = await collection.list_indexes()
    return {_pattern(info["key"]) for info in await cursor.to_list(None)}


def missing(models: Sequence[IndexModel], present: set[tuple[tuple[str, Any], ...]]) -> list[IndexModel]:
    return [model for model in models if _pattern(model.document["key"]) not in present]


def _name(model: IndexModel) -> str:
    return str(model.document["name"])


async def build_indexes(collection: AsyncCollection[Any], models: Sequence[IndexModel], progress: Progress) -> int:
    """Build every missing index in one ``createIndexes``; returns how many were built.

    ``collection`` must be one whose operations have no socket timeout (``unbounded``):
    the driver applies ``socketTimeoutMS`` to any operation without a ``pymongo.timeout``
    deadline, a build included (issue 36 defect 1), so ``pymongo.timeout(None)`` around
    the build, as here before, still cut it at 60 s."""
    present = await existing_patterns(collection)
    absent = missing(models, present)
    building = {_name(model) for model in absent}
    for position, model in enumerate(models, 1):
        progress(position, len(models), _name(model), "building" if _name(model) in building else "present")
    if not absent:
        return 0
    started = time.monotonic()
    await collection.create_indexes(absent)
    took = f"built in {time.monotonic() - started:.1f} s"
    if len(absent) > 1:
        took += f" (one build of {len(absent)} indexes)"
    for position, model in enumerate(models, 1):
        if _name(model) in building:
            progress(position, len(models), _name(model), took)
    return len(absent)


@contextlib.asynccontextmanager
async def unbounded(
    collection: AsyncCollection[Any], settings: MongoSettings | None
) -> AsyncIterator[AsyncCollection[Any]]:
    """``collection`` as seen through a client with no socket timeout, inside
    ``pymongo.timeout(0)``: what an index build that takes what it takes needs.

    PyMongo 4.20 (``pool_shared.apply_timeout``, ``network_layer.async_receive_message``)
    waits for a reply for the remaining ``pymongo.timeout`` deadline when one is set, and
    otherwise for the pool's ``socketTimeoutMS``, which the store sets to 60 s
    (config.py). ``pymongo.timeout(0)`` sets no deadline and also keeps a ``timeoutMS``
    from the URL from applying one (it applies only where no ``pymongo.timeout`` is in
    force); the socket timeout is lifted only by a client made without one. So: the store's
    own client when it has no socket timeout; otherwise a second client from the same URL
    and options with ``socketTimeoutMS=0`` (none), closed afterwards. A client the host
    application lent us keeps its socket timeout; there the build runs under a deadline of
    ``BORROWED_BUILD_DEADLINE_S`` instead (which the driver sends as ``maxTimeMS``)."""
    client = collection.database.client
    if client.options.pool_options.socket_timeout is None:
        with pymongo.timeout(0):
            yield collection
        return
    if settings is None:
        with pymongo.timeout(BORROWED_BUILD_DEADLINE_S):
            yield collection
        return
    options = {k: v for k, v in settings.driver_kwargs().items() if k.lower() not in _TIMEOUT_OPTIONS}
    builder: AsyncMongoClient[Any] = AsyncMongoClient(settings.url, socketTimeoutMS=0, **options)
    try:
        with pymongo.timeout(0):
            yield builder[collection.database.name].get_collection(collection.name, collection.codec_options)
    finally:
        # Bounded like the store's own close (plumbing.CLOSE_TIMEOUT_S): endSessions waits
        # for server selection, and a lost server must not hold the command's exit.
        with contextlib.suppress(Exception), pymongo.timeout(5.0):
            async with asyncio.timeout(10.0):
                await builder.close()


class MissingUniqueKeyIndexError(ConnectionError):
    """A large collection without the unique-key index (``refusal`` says what to do)."""


def refusal(where: str, documents: int, migrate_hint: str, consequence: str = "so this process will not start") -> str:
    return (
        f"{where} has {documents:,} jobs but no unique-key index (name_1_uniqueKey_1): without it two "
        f"workers can store the same unique key twice, {consequence}. Build the indexes "
        f"first, once, before starting workers: {migrate_hint}"
    )


async def ensure_at_open(
    collection: AsyncCollection[Any],
    models: Sequence[IndexModel],
    where: str,
    migrate_hint: str,
    consequence: str = "so this process will not start",
) -> list[str]:
    """What ``open()`` does about indexes (see the module docstring); returns the names of
    the indexes still missing (logged once here). The store runs it again after the
    collection was dropped or renamed (``MongoPlumbing._indexes_after_invalidate``)."""
    absent = missing(models, await existing_patterns(collection))
    if not absent:
        return []
    documents = await collection.estimated_document_count()
    if documents <= BUILD_AT_OPEN_MAX_DOCS:
        # A deadline, not timeout(None): only a deadline replaces the 60 s socket timeout.
        with pymongo.timeout(OPEN_BUILD_DEADLINE_S):
            await collection.create_indexes(list(absent))
        return []
    if any(_pattern(model.document["key"]) == UNIQUE_KEY_INDEX for model in absent):
        raise MissingUniqueKeyIndexError(refusal(where, documents, migrate_hint, consequence))
    names = [_name(model) for model in absent]
    log.warning(
        "%s has %s jobs and lacks %d of Monque's indexes (%s): running without them, which is safe but makes "
        "the queries they serve scan; build them before the next deploy: %s",
        where,
        f"{documents:,}",
        len(names),
        ", ".join(names),
        migrate_hint,
    )
    return names
