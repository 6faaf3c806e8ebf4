"""The MongoDB store: Monque's schema, queries and indexes on PyMongo's async API.

Modules, one per port of the store contract, each with its methods and the documents they
send: ``admin`` (open, close, index builds), ``intake``, ``claims``, ``liveness``
(heartbeats, stale recovery), ``reads``, ``management``, ``fleet``, ``retention``,
``feed`` (the change feed, and reading a change stream: invalidation, end of stream, idle
timeouts); ``store`` composes them into ``MongoStore``. Beneath them: ``plumbing`` (the
state and calls every port shares), ``documents`` (the filters, updates and pipelines
several ports send, as pure functions), ``config`` (URL parsing, password masking, driver
options), ``indexes`` (upstream's index list and the console's), ``index_build``,
``changes`` (change stream pipeline and event mapping), ``retry`` (bulk retry around
unique-key clashes), ``server`` (minimum version, topology), ``errors`` (driver → engine
errors), ``read_preference``.
"""

from .config import InvalidMongoUrlError, MongoSettings, parse_mongo_url
from .store import MongoStore

__all__ = ["InvalidMongoUrlError", "MongoSettings", "MongoStore", "parse_mongo_url"]
