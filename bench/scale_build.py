"""Build (and cache) a big SQLite store with a real deployment's mix of jobs, fast.

The mix of issue 26: 20 names, 85 % completed, 8 % failed across 50 error groups, 5 %
pending (half due now, half scheduled later), 2 % cancelled; one job every 10 ms of history
(100 jobs/s), so a 10M store spans about 28 hours.

Why not ``enqueue_many``: ten million jobs through the engine take most of an hour. The file
is created by the engine (so the schema, indexes and meta rows are the engine's own), then
filled with ``executemany`` in big transactions, then opened once through ``Monque(...)`` so
any migration or backfill the engine runs on a file it did not write runs there (timed and
reported as the first open). Only job columns are written, through the column list that
``PRAGMA table_info`` gives at build time: columns the engine adds for its own bookkeeping
(``change_seq`` and whatever comes next) keep their defaults, and a NOT NULL column without a
default that we do not know how to fill stops the build with its name.

Built files are cached under ``cache/`` by size, the file's schema version and ``MIX_VERSION``
(bump it when the rows written here change), with a sidecar JSON of what the build measured.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monque_engine import Attempt, JobListFilter, JobStatus, Monque
from monque_engine.errorgroups import error_group_key

MIX_VERSION = 1
TABLE = "monque_jobs"
NAMES = tuple(
    f"{verb}-{noun}"
    for verb, noun in (
        ("send", "email"), ("resize", "image"), ("deliver", "webhook"), ("sync", "crm"), ("build", "report"),
        ("charge", "card"), ("index", "search"), ("render", "pdf"), ("notify", "slack"), ("refresh", "cache"),
        ("import", "csv"), ("export", "ledger"), ("score", "lead"), ("archive", "logs"), ("push", "mobile"),
        ("check", "fraud"), ("transcode", "video"), ("compact", "store"), ("settle", "invoice"), ("warm", "cdn"),
    )
)  # fmt: skip
ERROR_TYPES = (
    "httpx.ConnectTimeout",
    "httpx.ReadTimeout",
    "aiosmtplib.SMTPServerDisconnected",
    "PIL.UnidentifiedImageError",
    "builtins.ValueError",
)
GROUPS = 50
#: Every ``STEP_MS`` of history one job was created.
STEP_MS = 10
#: The job the delete measurement removes in bulk: one name's oldest jobs.
DELETE_NAME = NAMES[4]


def status_of(i: int) -> str:
    """85 % completed, 8 % failed, 5 % pending, 2 % cancelled, spread evenly over the history."""
    bucket = (i * 7919) % 100
    if bucket < 85:
        return "completed"
    if bucket < 93:
        return "failed"
    if bucket < 98:
        return "pending"
    return "cancelled"


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    error_type: str
    message: str

    @property
    def key(self) -> str:
        return error_group_key(self.name, self.error_type, self.message)


ERROR_GROUPS = tuple(
    Group(NAMES[g % len(NAMES)], ERROR_TYPES[g % len(ERROR_TYPES)], f"upstream {g} refused the request")
    for g in range(GROUPS)
)


def _job_values(i: int, now_ms: int, size: int) -> dict[str, Any]:
    """One job's columns (the engine's names), by its index in creation order."""
    status = status_of(i)
    created = now_ms - (size - i) * STEP_MS
    row: dict[str, Any] = {
        "id": f"{0x67880000 + i // 1_000_000:08x}{i:016x}",
        "name": NAMES[i % len(NAMES)],
        "data": f'{{"i":{i},"user":"user-{i % 100_003}@example.com","order":{i * 7 % 1_000_003}}}',
        "status": status,
        "next_run_at": created,
        "fail_count": 0,
        "created_at": created,
        "updated_at": created + 50,
    }
    if status == "failed":
        group = ERROR_GROUPS[(i // 100) % GROUPS]
        ended = created + 60_000
        row.update(
            name=group.name,
            fail_count=3,
            fail_reason=group.message,
            updated_at=ended,
            next_run_at=ended - 30_000,
            error_type=group.error_type,
            error_group=group.key,
            attempts=json.dumps(
                [
                    Attempt(n, "retrying" if n < 3 else "failed", "worker-1:881:c01d5e", end - 900, end,
                            group.error_type, group.message).to_fields(duration=False)
                    for n, end in ((1, created + 1_000), (2, created + 30_000), (3, ended))
                ],
                separators=(",", ":"),
            ),
        )  # fmt: skip
    elif status == "pending":
        row.update(updated_at=created, next_run_at=created if i % 2 else now_ms + 3_600_000 + i % 86_400_000)
    elif status == "cancelled":
        row.update(updated_at=created + 1_000)
    return row


def _table_columns(conn: sqlite3.Connection) -> list[tuple[str, bool, bool]]:
    """``(name, not null, has default)`` of each column of the job table, as the engine made it."""
    return [(row[1], bool(row[3]), row[4] is not None) for row in conn.execute(f"PRAGMA table_info({TABLE})")]


def writable_columns(conn: sqlite3.Connection) -> list[str]:
    """The job columns this builder fills, in table order; refuses a table it cannot fill."""
    known = set(_job_values(0, 0, 1)) | {
        "locked_at", "claimed_by", "last_heartbeat", "heartbeat_interval", "fail_reason", "repeat_interval",
        "unique_key", "attempts", "error_type", "error_group",
    }  # fmt: skip
    columns = _table_columns(conn)
    unfillable = [name for name, not_null, has_default in columns if not_null and not has_default and name not in known]
    if unfillable:
        raise SystemExit(
            f"{TABLE} has NOT NULL column(s) without a default that bench/scale_build.py does not fill: "
            f"{', '.join(unfillable)}; teach _job_values to write them"
        )
    return [name for name, _, _ in columns if name in known]


def _rows(columns: list[str], start: int, stop: int, now_ms: int, size: int) -> Iterator[tuple[Any, ...]]:
    for i in range(start, stop):
        values = _job_values(i, now_ms, size)
        yield tuple(values.get(column) for column in columns)


def schema_version(directory: Path) -> int:
    """The schema version the engine in use writes to a new file (read from a throwaway one)."""
    probe = directory / "schema-probe.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{probe}{suffix}").unlink(missing_ok=True)
    asyncio.run(_open_once(f"sqlite:///{probe}"))
    conn = sqlite3.connect(probe)
    try:
        (version,) = conn.execute(f"SELECT value FROM {TABLE}_meta WHERE key = 'schema_version'").fetchone()
    finally:
        conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{probe}{suffix}").unlink(missing_ok=True)
    return int(version)


async def _open_once(url: str) -> None:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    await monque.close()


async def _count_once(url: str) -> float:
    """Rows written with plain ``executemany`` bypass the store's journal, as a hand edit does:
    have the engine recount its kept counts (``repair_counts``), timed."""
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        started = time.perf_counter()
        await monque.repair_counts()
        return time.perf_counter() - started
    finally:
        await monque.close()


async def _engine_counts(url: str) -> dict[str, int]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        return {s.value: await monque.count_jobs(JobListFilter(status=s)) for s in JobStatus}
    finally:
        await monque.close()


def cached_path(cache: Path, size: int, version: int) -> Path:
    return cache / f"jobs-{size}-schema{version}-mix{MIX_VERSION}.db"


def build(cache: Path, size: int, say: Callable[[str], None] = print) -> tuple[Path, dict[str, Any]]:
    """The cached store of ``size`` jobs, built first if missing; and what its build measured."""
    cache.mkdir(parents=True, exist_ok=True)
    version = schema_version(cache)
    path = cached_path(cache, size, version)
    facts_path = path.with_suffix(".json")
    older = None if path.exists() else _older_build(cache, size, version)
    if older is not None:
        facts = json.loads(older.with_suffix(".json").read_text())
        say(f"  no store of schema {version} cached: measuring copies of {older.name}, upgraded on their first open")
        return older, {**facts, "upgrade_from": facts.get("schema_version"), "schema_version": version}
    if path.exists() and facts_path.exists():
        facts = json.loads(facts_path.read_text())
        if "count_seconds" not in facts:  # built before the engine kept counts: count once now
            facts["count_seconds"] = round(asyncio.run(_count_once(f"sqlite:///{path}")), 2)
            facts["engine_counts"] = asyncio.run(_engine_counts(f"sqlite:///{path}"))
            facts["engine_counts_agree"] = facts["engine_counts"] == facts["counts"]
            facts_path.write_text(json.dumps(facts, indent=1))
        return path, facts
    tmp = path.with_suffix(".building")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    url = f"sqlite:///{tmp}"
    asyncio.run(_open_once(url))
    now_ms = int(time.time() * 1000)
    started = time.perf_counter()
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA cache_size=-1000000")  # 1 GB: the indexes' hot pages stay in memory
        columns = writable_columns(conn)
        sql = f"INSERT INTO {TABLE} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        batch = 200_000
        for start in range(0, size, batch):
            conn.execute("BEGIN")
            conn.executemany(sql, _rows(columns, start, min(size, start + batch), now_ms, size))
            conn.execute("COMMIT")
            if size >= 1_000_000 and (start // batch) % 10 == 9:
                done = min(size, start + batch)
                say(f"  … {done:,} of {size:,} rows ({time.perf_counter() - started:.0f} s)")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    inserted = time.perf_counter() - started
    opened = time.perf_counter()
    asyncio.run(_open_once(url))
    first_open = time.perf_counter() - opened
    count_seconds = asyncio.run(_count_once(url))
    counts = asyncio.run(_engine_counts(url))
    conn = sqlite3.connect(tmp)
    try:
        actual = dict(conn.execute(f"SELECT status, COUNT(*) FROM {TABLE} GROUP BY status").fetchall())
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    actual = {s.value: int(actual.get(s.value, 0)) for s in JobStatus}
    facts = {
        "size": size,
        "schema_version": version,
        "mix_version": MIX_VERSION,
        "columns_written": columns,
        "built_at_ms": now_ms,
        "insert_seconds": round(inserted, 1),
        "first_open_seconds": round(first_open, 2),
        "count_seconds": round(count_seconds, 2),
        "counts": actual,
        "engine_counts_agree": counts == actual,
        "engine_counts": counts,
        "file_bytes": tmp.stat().st_size,
    }
    tmp.rename(path)
    facts_path.write_text(json.dumps(facts, indent=1))
    return path, facts


def _older_build(cache: Path, size: int, version: int) -> Path | None:
    """The newest cached store of ``size`` jobs made by an older schema, if any: its working
    copies are upgraded by the engine's own migration on their first open (``upgrade_copy``),
    so a schema bump does not mean rebuilding 10M jobs. The cached file itself is never opened."""
    for older in range(version - 1, 0, -1):
        path = cached_path(cache, size, older)
        if path.exists() and path.with_suffix(".json").exists():
            return path
    return None


def upgrade_copy(path: Path, facts: dict[str, Any]) -> float | None:
    """Open a working copy of an older schema's store once, before anything is measured on
    it: the engine migrates it. How long that first open took (None: nothing to upgrade)."""
    if facts.get("upgrade_from") is None:
        return None
    started = time.perf_counter()
    asyncio.run(_open_once(f"sqlite:///{path}"))
    return time.perf_counter() - started


def working_copy(source: Path, directory: Path, label: str) -> Path:
    """A fresh copy of a cached store to measure on (the cache itself is never opened by a measure)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{label}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target
