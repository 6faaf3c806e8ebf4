"""Store selection by URL scheme. Drivers are imported lazily, so a SQLite user never imports
PyMongo's network stack and a MongoDB user never opens a file."""

from __future__ import annotations

from typing import Any

from ..errors import MonqueError
from .base import JobStore, StoreOpenOptions, StoreSelector
from .urls import mask_url

DEFAULT_URL = "sqlite:///monque.db"


class InvalidStoreUrlError(MonqueError, ValueError):
    pass


def open_store(url: str, **store_options: Any) -> JobStore:
    """Build (not yet open) the store a URL names: ``sqlite:///path`` or ``mongodb://…``."""
    if not isinstance(url, str) or "://" not in url:
        raise InvalidStoreUrlError(
            f"Store URL {mask_url(str(url))!r} has no scheme; use sqlite:///path/to/jobs.db or mongodb://host/db"
        )
    scheme = url.split("://", 1)[0].lower()
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore.from_url(url, **store_options)
    if scheme in ("mongodb", "mongodb+srv"):
        try:
            from .mongo import MongoStore
        except ImportError as error:  # the MongoDB store arrives with its own issue
            raise InvalidStoreUrlError(f"The MongoDB store is not available in this build ({error})") from None
        return MongoStore.from_url(url, **store_options)
    raise InvalidStoreUrlError(
        f"Unknown store URL scheme {scheme!r} in {mask_url(url)!r}; use sqlite:///path/to/jobs.db, "
        "mongodb://host/db or mongodb+srv://host/db"
    )


__all__ = ["DEFAULT_URL", "InvalidStoreUrlError", "JobStore", "StoreOpenOptions", "StoreSelector", "open_store"]
