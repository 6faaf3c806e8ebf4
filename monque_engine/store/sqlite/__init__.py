"""The embedded SQLite store (the default)."""

from .store import SqliteStore
from .url import InvalidSqliteUrlError, SqliteSettings, parse_sqlite_url

__all__ = ["InvalidSqliteUrlError", "SqliteSettings", "SqliteStore", "parse_sqlite_url"]
