"""The MongoDB store: Monque's schema, queries and indexes on PyMongo's async API.

Modules: ``config`` (URL parsing, password masking), ``documents`` (every filter, update
and pipeline as a pure function), ``indexes`` (upstream's index list), ``changes`` (change
stream pipeline and event mapping), ``errors`` (driver → engine errors), ``store``.
"""

from .config import InvalidMongoUrlError, MongoSettings, parse_mongo_url
from .store import MongoStore

__all__ = ["InvalidMongoUrlError", "MongoSettings", "MongoStore", "parse_mongo_url"]
