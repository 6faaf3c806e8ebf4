"""``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db`` with a few settings.

Query parameters:
  synchronous=normal|full   durability: NORMAL (default) survives a process crash and may
                            lose the last commits on power loss; FULL fsyncs every commit.
  busy_timeout=SECONDS      how long a write waits for another process's lock (default 10).
  feed_interval_ms=MS       how often the change feed looks for other processes' commits (2).
  feed_retention=ROWS       change rows kept for resuming watches (default 100000).
  inline_writes=0|1         allow the uncontended inline write path (default 1).
  mode=rwc|rw|ro            rwc (default) creates the file if missing; rw requires it to
                            exist; ro opens it read-only: never creates or changes the
                            file (no WAL switch, no schema or index creation, no writes).
  cache_mb=MB               SQLite's page cache per connection (default 64, 1..4096). It
                            fills up to this as pages are read and stays: a process that
                            only looks (a console) can set it low to keep its memory small.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple
from urllib.parse import parse_qsl, unquote

from ..urls import InvalidStoreUrlError


class InvalidSqliteUrlError(InvalidStoreUrlError):
    """A SQLite URL that cannot be used; an ``InvalidStoreUrlError`` like every bad store URL."""


class SqliteSettings(NamedTuple):
    """A ``sqlite:///`` URL read: the file and the settings its query string gives."""

    path: str
    display_url: str
    synchronous: str = "normal"
    busy_timeout: float = 10.0
    feed_interval: float = 0.002
    feed_retention: int = 100_000
    inline_writes: bool = True
    maintenance_interval: float = 10.0
    #: ``mode=ro``: open read-only; every write raises ConnectionError.
    read_only: bool = False
    #: ``mode=rw`` / ``mode=ro``: the file must already exist.
    must_exist: bool = False
    #: ``cache_mb``: each connection's page cache (``PRAGMA cache_size``), in MiB.
    cache_mb: int = 64


_USAGE = "use sqlite:///relative/path.db or sqlite:////absolute/path.db"


def _number(key: str, value: str, low: float, high: float) -> float:
    """A finite number in [low, high]: NaN would make the feed spin (every comparison is
    false) and infinity would kill its thread, so both are refused here, with the range."""
    try:
        number = float(value)
    except ValueError:
        raise InvalidSqliteUrlError(f"SQLite URL parameter {key}={value!r} is not a number") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise InvalidSqliteUrlError(
            f"SQLite URL parameter {key} must be a number from {low:g} to {high:g}, got {value!r}"
        )
    return number


_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


#: POSIX's usual limits (Linux: NAME_MAX 255 bytes per name, PATH_MAX 4096 per path, NUL included).
NAME_MAX = 255
PATH_MAX = 4095


def _check_length(path: str) -> None:
    """Refuse a path the OS would refuse, with the limit, instead of ``[Errno 36] File name too
    long: '<the whole path>'`` (an internal error in the CLI) later (probe finding)."""
    encoded = os.fsencode(path)
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > NAME_MAX:
        raise InvalidSqliteUrlError(
            f"SQLite path has a name of {longest} bytes; file systems allow {NAME_MAX} per name: use a shorter file name"
        )
    if len(encoded) > PATH_MAX:
        raise InvalidSqliteUrlError(
            f"SQLite path is {len(encoded)} bytes long; the OS allows {PATH_MAX}: use a shorter path"
        )


def parse_sqlite_url(url: str, **overrides: object) -> SqliteSettings:
    if not url.lower().startswith("sqlite://"):
        raise InvalidSqliteUrlError(f"Not a SQLite URL: {url!r}; {_USAGE}")
    rest = url[len("sqlite://") :]
    if not rest.startswith("/"):
        raise InvalidSqliteUrlError(f"SQLite URL {url!r} needs three slashes before the path; {_USAGE}")
    if "#" in rest:
        # A URL fragment means nothing to a file, and kept in the path it would create a file
        # literally named "jobs.db#…" beside the one meant.
        raise InvalidSqliteUrlError(
            f"SQLite URL {url!r} has a '#' (a URL fragment); drop it, or write %23 if it is part of the file name"
        )
    location, _, query = rest[1:].partition("?")
    path = unquote(location)
    if not path:
        raise InvalidSqliteUrlError(f"SQLite URL {url!r} names no file; {_USAGE}")
    if path == ":memory:":
        raise InvalidSqliteUrlError(
            "An in-memory SQLite database cannot be shared between connections or processes; use a file path"
        )
    if "\x00" in path:
        raise InvalidSqliteUrlError(f"SQLite URL {url!r} has a NUL byte (%00) in its path; file names cannot hold one")
    path = os.path.expanduser(path)
    _check_length(path)
    values: dict[str, object] = {}
    seen: set[str] = set()
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in seen:  # which one would win is not obvious to whoever wrote both
            raise InvalidSqliteUrlError(f"SQLite URL parameter {key} is given more than once in {url!r}; keep one")
        seen.add(key)
        if key == "synchronous":
            if value.lower() not in ("normal", "full"):
                raise InvalidSqliteUrlError(f"SQLite URL parameter synchronous must be normal or full, got {value!r}")
            values["synchronous"] = value.lower()
        elif key == "busy_timeout":
            values["busy_timeout"] = _number(key, value, 0, 86_400)
        elif key == "feed_interval_ms":
            values["feed_interval"] = _number(key, value, 0.1, 60_000) / 1000
        elif key == "feed_retention":
            values["feed_retention"] = int(_number(key, value, 1000, 1e12))
        elif key == "inline_writes":
            if value.lower() not in _BOOLEANS:
                raise InvalidSqliteUrlError(f"SQLite URL parameter inline_writes must be true or false, got {value!r}")
            values["inline_writes"] = _BOOLEANS[value.lower()]
        elif key == "mode":
            if value.lower() not in ("rwc", "rw", "ro"):
                raise InvalidSqliteUrlError(f"SQLite URL parameter mode must be rwc, rw or ro, got {value!r}")
            values["read_only"] = value.lower() == "ro"
            values["must_exist"] = value.lower() in ("rw", "ro")
        elif key == "cache_mb":
            values["cache_mb"] = int(_number(key, value, 1, 4096))
        else:
            known = "synchronous, busy_timeout, feed_interval_ms, feed_retention, inline_writes, mode, cache_mb"
            raise InvalidSqliteUrlError(f"Unknown SQLite URL parameter {key!r}; known: {known}")
    values.update(overrides)
    return SqliteSettings(path=path, display_url=url, **values)  # type: ignore[arg-type]
