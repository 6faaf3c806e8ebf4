"""Error groups: failed and retrying jobs grouped by name, exception type and message shape.

Why a stored key: grouping 100k failures by a normalised message at read time would mean
reading and normalising 100k messages for every refresh of an errors view. Instead the
processor computes the group key once, when it records the failure, and both stores keep
it (and the exception type) on the job, in an index restricted to failed and retrying
jobs. Grouping is then one indexed GROUP BY (SQLite) or ``$group`` (MongoDB).

The key is a hash of (job name, qualified exception type, normalised first line of the
message). Normalising replaces the parts that differ between occurrences of "the same"
error by placeholders: quoted values, UUIDs, ObjectIds and other long hex ids, numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from .timeutil import ms_to_datetime

#: Only this much of the first line takes part in grouping (and is shown as the pattern).
MAX_PATTERN_CHARS = 300
#: Per-minute buckets of the activity series (the last hour).
SPARK_MINUTES = 60
#: What starts the per-minute outcome counter row of an error group: ``\x1e`` + the group key.
#: A control character, which no job name may hold, so a group's row never meets a name's
#: (``error_counter_name``; see ``ErrorGroup`` for why failures are counted per group).
ERROR_COUNTER_PREFIX = "\x1e"

_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX_ID = re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b|\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
#: Not blank: ``\s`` is exactly ``str.isspace`` (what ``strip`` removes), for every code point.
_NONSPACE = re.compile(r"\S")


def normalize_message(message: str | None) -> str:
    """The message's first line with variable parts as placeholders.

    ``'signing_secret'`` → ``'<str>'``, ``order 1234 failed after 2.5 s`` →
    ``order <n> failed after <n> s``, ObjectIds and other long hex ids → ``<id>``,
    UUIDs → ``<uuid>``.
    """
    if not message:
        return ""
    line = _first_line(message)
    line = _QUOTED.sub(lambda m: f"{m.group(0)[0]}<str>{m.group(0)[0]}", line)
    line = _UUID.sub("<uuid>", line)
    line = _HEX_ID.sub("<id>", line)
    return _NUMBER.sub("<n>", line)


def _first_line(message: str) -> str:
    """``message.strip().split("\\n", 1)[0][:MAX_PATTERN_CHARS]``, reading only the start of it.

    The same result for every message (the group key of a failure recorded before and after
    must not differ), but a 10 MB message (a foreign row: the errors view reads one sample per
    group on every refresh) is no longer copied whole to be stripped: at most
    ``MAX_PATTERN_CHARS`` characters from the first non-blank one are read, and past them only
    as far as the next non-blank one, to strip the end exactly as ``strip`` would.
    """
    start = _NONSPACE.search(message)
    if start is None:
        return ""
    line = message[start.start() : start.start() + MAX_PATTERN_CHARS].split("\n", 1)[0]
    if _NONSPACE.search(message, start.start() + len(line)) is None:
        line = line.rstrip()  # nothing but blanks after it: ``strip`` would have cut them
    return line


def group_key(name: str, error_type: str, normalized: str) -> str:
    """Stable 16-hex-digit key of one group (the job name is part of it)."""
    import hashlib  # here: importing it starts OpenSSL (~5 ms), and a console's launch reads no failure

    digest = hashlib.sha1(f"{name}\x00{error_type}\x00{normalized}".encode("utf-8", "backslashreplace"))
    return digest.hexdigest()[:16]


def error_group_key(name: str, error_type: str, message: str | None) -> str:
    return group_key(name, error_type, normalize_message(message))


def error_counter_name(key: str) -> str:
    """The outcome counters' name under which failed attempts of group ``key`` are counted."""
    return ERROR_COUNTER_PREFIX + key


def is_error_counter(name: str) -> bool:
    """A counter row of an error group, not of a job name (health and Queues skip these)."""
    return name.startswith(ERROR_COUNTER_PREFIX)


def with_attempt_counts(
    row: ErrorGroupRow, first_minute: int | None, minutes: dict[int, int], hour_start_ms: int
) -> ErrorGroupRow:
    """``row`` with what the group's failed-attempt counters add: its first failure on record
    and its last hour counted in attempts.

    The members alone say when each member *last* failed: after a bulk retry every member
    failed again a minute ago, and FIRST SEEN read "1m ago" while the incident was 10 minutes
    old (issue 40). The counters count every failed attempt of the group per minute and are
    kept as long as the outcome counters (48 h), whatever happens to the jobs. A minute is
    the counters' resolution: the first seen is the members' exact instant when it falls in
    the counters' first minute, else the start of that minute. Each minute of the sparkline
    is the larger of the two counts (counters are flushed on the heartbeat tick, and jobs
    failed by another program are not counted: the members still show them).
    """
    first = row.first_seen_ms
    if first_minute is not None and first_minute < first // 60_000:
        first = first_minute * 60_000
    base = hour_start_ms // 60_000
    series = list(row.per_minute) or [0] * SPARK_MINUTES
    for minute, failed in minutes.items():
        bucket = minute - base
        if 0 <= bucket < SPARK_MINUTES:
            series[bucket] = max(series[bucket], failed)
    return ErrorGroupRow(
        row.key,
        row.name,
        row.error_type,
        row.count,
        row.retrying,
        first,
        row.last_seen_ms,
        tuple(series),
        row.sample_message,
    )


@dataclass(frozen=True, slots=True)
class ErrorGroup:
    """Failed and retrying jobs sharing a job name, exception type and message pattern.

    ``count`` is every member; ``retrying`` those still pending another attempt (the rest
    ended failed). Last seen is the latest instant a member failed (its ``updatedAt``).
    First seen is the group's first failed attempt still on record: the earliest of the
    members' last failures and of the group's failed-attempt counters (kept 48 h), so a bulk
    retry does not move it. ``per_minute`` counts failed attempts per minute over the last
    hour, oldest minute first (60 values, the last one the current minute): see
    ``with_attempt_counts``.
    ``key`` targets the group in bulk calls: ``JobSelector(error_group=key)``.
    """

    key: str
    name: str
    error_type: str | None
    pattern: str
    sample_message: str | None
    count: int
    retrying: int
    first_seen_ms: int
    last_seen_ms: int
    per_minute: tuple[int, ...]

    @property
    def failed(self) -> int:
        return self.count - self.retrying

    @property
    def first_seen(self) -> datetime:
        return ms_to_datetime(self.first_seen_ms)

    @property
    def last_seen(self) -> datetime:
        return ms_to_datetime(self.last_seen_ms)

    @property
    def title(self) -> str:
        """``Type: pattern`` as a one-line label."""
        kind = self.error_type or "(unknown type)"
        return f"{kind}: {self.pattern}" if self.pattern else kind


@dataclass(frozen=True, slots=True)
class ErrorGroupRow:
    """What a store returns per group: counts and instants, no sample message yet."""

    key: str
    name: str
    error_type: str | None
    count: int
    retrying: int
    first_seen_ms: int
    last_seen_ms: int
    per_minute: tuple[int, ...]
    sample_message: str | None = None


def fold_buckets(
    rows: list[tuple[str, str, str | None, int, int, int, int, int]], hour_start_ms: int
) -> list[ErrorGroupRow]:
    """Fold store rows ``(key, name, type, bucket, count, retrying, first, last)``, one per
    group and minute bucket (``-1``: before the last hour), into one row per group."""
    groups: dict[str, ErrorGroupRow] = {}
    for key, name, error_type, bucket, count, retrying, first, last in rows:
        series = [0] * SPARK_MINUTES
        if 0 <= bucket < SPARK_MINUTES:
            series[bucket] = count
        row = ErrorGroupRow(key, name, error_type, count, retrying, first, last, tuple(series))
        seen = groups.get(key)
        if seen is not None:
            row = ErrorGroupRow(
                key,
                seen.name,
                seen.error_type or error_type,
                seen.count + count,
                seen.retrying + retrying,
                min(seen.first_seen_ms, first),
                max(seen.last_seen_ms, last),
                tuple(a + b for a, b in zip(seen.per_minute, series, strict=True)),
            )
        groups[key] = row
    return list(groups.values())


def hour_window(now_ms: int) -> int:
    """Start of the 60-minute window that ends with the current minute."""
    return (now_ms // 60_000 - (SPARK_MINUTES - 1)) * 60_000
