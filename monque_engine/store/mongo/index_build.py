"""Building the jobs collection's indexes: a step of its own before a deploy, not every open.

Every ``open()`` used to run ``createIndexes`` with the full list. On an existing 10M-job
collection (a first Python deploy next to Node Monque) that built the console's extra
indexes while all 20 workers waited in ``initialize()``, or failed at the 600 s deadline
(issue 27). Now:

* ``build_indexes`` (``monque-tui migrate``, ``MongoStore.build_indexes``) builds the
  missing ones one at a time, reporting each, with no deadline;
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

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pymongo
from pymongo import IndexModel
from pymongo.asynchronous.collection import AsyncCollection

from ...errors import ConnectionError

log = logging.getLogger("monque_engine.mongo")

#: Up to this many documents a missing index is built at open (seconds at most).
BUILD_AT_OPEN_MAX_DOCS = 100_000
#: The index whose absence is not safe: deduplication by unique key rests on it.
UNIQUE_KEY_INDEX = (("name", 1), ("uniqueKey", 1))

#: progress(position, count, index name, state): state is "present", "building" or
#: "built in 12.3 s".
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
    """Build every missing index, one at a time, with no deadline; returns how many were built."""
    present = await existing_patterns(collection)
    built = 0
    for position, model in enumerate(models, 1):
        if _pattern(model.document["key"]) in present:
            progress(position, len(models), _name(model), "present")
            continue
        progress(position, len(models), _name(model), "building")
        started = time.monotonic()
        with pymongo.timeout(None):  # a build on millions of documents takes what it takes
            await collection.create_indexes([model])
        built += 1
        progress(position, len(models), _name(model), f"built in {time.monotonic() - started:.1f} s")
    return built


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
        with pymongo.timeout(None):
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
