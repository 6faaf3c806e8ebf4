"""Store selection by URL scheme. Drivers are imported lazily, so a SQLite user never imports
PyMongo's network stack and a MongoDB user never opens a file.

Besides ``open_store``, two questions a tool asks before it opens anything, answered by the
store the URL names without creating or changing a file: ``locate_store`` (where does the
URL point, does it exist, which collections does it hold) and ``check_collection_name``.
Callers outside the engine (the console, the CLI) use these instead of a store's modules.
"""

from __future__ import annotations

from typing import Any

from .base import InvalidCollectionNameError, JobStore, StoreLocation, StoreOpenOptions, StoreSelector
from .urls import InvalidStoreUrlError, mask_url

DEFAULT_URL = "sqlite:///monque.db"


def store_class(url: str) -> type[JobStore]:
    """The store class a URL names by its scheme (imported now, not instantiated)."""
    if not isinstance(url, str) or "://" not in url:
        raise InvalidStoreUrlError(
            f"Store URL {mask_url(str(url))!r} has no scheme; use sqlite:///path/to/jobs.db or mongodb://host/db"
        )
    scheme = url.split("://", 1)[0].lower()
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore
    if scheme in ("mongodb", "mongodb+srv"):
        try:
            from .mongo import MongoStore
        except ImportError as error:  # the MongoDB store arrives with its own issue
            raise InvalidStoreUrlError(f"The MongoDB store is not available in this build ({error})") from None
        return MongoStore
    raise InvalidStoreUrlError(
        f"Unknown store URL scheme {scheme!r} in {mask_url(url)!r}; use sqlite:///path/to/jobs.db, "
        "mongodb://host/db or mongodb+srv://host/db"
    )


def open_store(url: str, **store_options: Any) -> JobStore:
    """Build (not yet open) the store a URL names: ``sqlite:///path`` or ``mongodb://…``."""
    return store_class(url).from_url(url, **store_options)


def locate_store(url: str) -> StoreLocation:
    """Where ``url`` points and what is there, found without opening the store: a SQLite URL's
    file, whether it exists and which Monque collections it holds (read through a read-only
    connection, so looking never creates or changes it). Raises ``InvalidStoreUrlError`` for
    a URL no store can use."""
    return store_class(url).locate(url)


def check_collection_name(url: str, name: str) -> str:
    """``name`` if the store ``url`` names can hold a collection of that name, else raise
    ``InvalidCollectionNameError`` saying what is wrong (a SQLite table name, MongoDB's rules).

    Said before anything is opened. A URL that names no known store gets the rule every
    store shares (a name at all); ``open_store`` is the one to report the URL itself."""
    try:
        named = store_class(url)
    except InvalidStoreUrlError:
        return JobStore.check_collection_name(name)
    return named.check_collection_name(name)


__all__ = [
    "DEFAULT_URL",
    "InvalidCollectionNameError",
    "InvalidStoreUrlError",
    "JobStore",
    "StoreLocation",
    "StoreOpenOptions",
    "StoreSelector",
    "check_collection_name",
    "locate_store",
    "open_store",
    "store_class",
]
