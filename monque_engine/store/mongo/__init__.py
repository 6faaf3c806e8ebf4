"""The MongoDB store: Monque's schema, queries and indexes on PyMongo's async API.

Modules: ``config`` (URL parsing, password masking, driver options), ``documents`` (every
filter, update and pipeline as a pure function), ``indexes`` (upstream's index list and the
console's), ``changes`` (change stream pipeline and event mapping), ``feed`` (reading a
change stream: invalidation, end of stream, idle timeouts), ``retry`` (bulk retry around
unique-key clashes), ``server`` (minimum version, topology), ``errors`` (driver → engine
errors), ``store``.
"""

from .config import InvalidMongoUrlError, MongoSettings, parse_mongo_url
from .store import MongoStore

__all__ = ["InvalidMongoUrlError", "MongoSettings", "MongoStore", "parse_mongo_url"]
