"""The MongoDB store: Monque's own collection, queries and indexes, on PyMongo's async API.

Every transition is one atomic single-document ``findOneAndUpdate`` or one ``updateMany``
whose filter carries the guard (status, owner), exactly as upstream Monque does, so Node
and Python schedulers can share a collection and still never double-claim or overwrite
each other's transitions.

``MongoStore`` is only the composition: each port of the store contract is one module with
its methods and the documents they send (``admin``, ``intake``, ``claims``, ``liveness``,
``reads``, ``management``, ``fleet``, ``retention``, ``feed``), all built on the shared
plumbing in ``plumbing.py`` (the collection, ``_call`` and the driver → engine error
translation) and the documents several ports send (``documents.py``). The SQLite store
has the same shape (``store/sqlite/``); docs/architecture.md maps one onto the other.

Two ways to build one:

* ``MongoStore.from_url("mongodb://user:pw@host/db")`` (what ``open_store`` does): the store
  owns an ``AsyncMongoClient`` and closes it.
* ``MongoStore(database)`` or ``MongoStore(collection)`` with the host application's
  ``AsyncDatabase`` / ``AsyncCollection``: the store borrows the client and never closes it.
"""

from __future__ import annotations

from typing import Any

from . import config
from .admin import MongoAdmin
from .claims import MongoClaims
from .config import parse_mongo_url
from .feed import MongoFeed
from .fleet import MongoFleet
from .intake import MongoIntake
from .liveness import MongoLiveness
from .management import MongoManagement
from .reads import MongoReads
from .retention import MongoRetention
from .running import MongoRunning


class MongoStore(
    MongoAdmin,
    MongoIntake,
    MongoClaims,
    MongoLiveness,
    MongoReads,
    MongoManagement,
    MongoFleet,
    MongoRetention,
    MongoRunning,
    MongoFeed,
):
    """The MongoDB store: one class per port, composed (see the module docstring)."""

    kind = "mongodb"

    @classmethod
    def from_url(cls, url: str, **options: Any) -> MongoStore:
        """``database=`` overrides the URL's path; ``server_selection_timeout_ms=`` sets the
        driver's serverSelectionTimeoutMS (and the first ping's wait, 5 s by default); other
        keyword arguments go to ``AsyncMongoClient`` (tls=, appname=, socketTimeoutMS=, …)."""
        return cls(parse_mongo_url(url, **options))

    check_collection_name = staticmethod(config.check_collection_name)
    locate = staticmethod(config.locate)


__all__ = ["MongoStore"]
