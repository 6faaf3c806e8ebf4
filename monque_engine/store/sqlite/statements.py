"""The SQL text of the SQLite store's statements: pure builders of their arguments.

The counterpart of ``store/mongo/documents.py``: every guarded statement the store runs is
written here once, so it can be read (and its guard checked) in one place, and the modules
that run them (one per port: ``claims.py``, ``liveness.py``, ``management.py``,
``retention.py``, ``fleet.py``, ``reads.py``, …, and ``completions.py``) are plumbing. Builders take the collection's ``Tables`` (and, where the text
depends on them, counts of bound values) and return text; where the values belong to the
text (an attempt record built in SQL from the row), they return text and its parameters.

Every write of a job row sets ``change_seq`` to ``Tables.change_stamp`` (its commit-order
position, ADR 0015; ``tests/test_bulk_commit_order.py`` checks each one here). Statuses are
SQL literals, never bound: a bound status keeps SQLite off the partial indexes (ADR 0017).
Feed rows and counts are never written here: the journal (``journal.py``) writes them.
"""

from __future__ import annotations

import json
from typing import Any

from .. import guards
from .queries import append_attempt, row_attempt
from .schema import CLAIM_COLUMNS, ERROR_MEMBER, FINISHED, INTEGERS_ONLY, NO_ERROR_TYPE, Tables
from .unreadable import CLAIM_STATUS

#: The assignments that take a job out of its claim.
CLAIM_RELEASE = "locked_at = NULL, claimed_by = NULL, last_heartbeat = NULL"

# -- attempt records, built in SQL from the row ------------------------------------------------


def completed_attempt(now_ms: int) -> tuple[str, tuple[Any, ...]]:
    """A completion records its attempt from the row and clears the error fields (and the
    claim fields: this form is for a completion that leaves the job pending or with history)."""
    record, params = append_attempt(*row_attempt("completed", now_ms))
    return f"fail_reason = NULL, error_type = NULL, error_group = NULL, attempts = {record}, {CLAIM_RELEASE}", params


#: A one-off completion (the hot path). A job without history keeps its claim's
#: ``claimed_by`` and ``locked_at`` as the record of the attempt that completed it, which
#: ``row_to_job`` turns into that ``Attempt`` (and hides as claim fields): the row does not
#: grow on the drain path (an appended JSON record made every completed row ~90 bytes
#: longer, which a drain of no-op jobs measured). A job with history gets its record
#: appended and its claim fields cleared, as every other outcome does.
COMPLETED_ONE_OFF = (
    "fail_reason = NULL, error_type = NULL, error_group = NULL, last_heartbeat = NULL, "
    "claimed_by = CASE WHEN attempts IS NULL THEN claimed_by END, "
    "locked_at = CASE WHEN attempts IS NULL THEN locked_at END, "
    "attempts = CASE WHEN attempts IS NULL THEN NULL ELSE {append} END"
)


def completed_one_off(now_ms: int) -> tuple[str, tuple[Any, ...]]:
    record, params = append_attempt(*row_attempt("completed", now_ms))
    return COMPLETED_ONE_OFF.format(append=record), params


def stale_attempt(now_ms: int) -> tuple[str, tuple[Any, ...]]:
    """Stale recovery records the attempt unless its last record already is this attempt's
    (a shutdown that gave up on it wrote one)."""
    record, params = append_attempt(*row_attempt("stale", now_ms))
    return (
        "attempts = CASE WHEN attempts IS NOT NULL AND json_valid(attempts) "
        "AND json_extract(attempts, '$[#-1].startedAt') IS locked_at "
        f"AND json_extract(attempts, '$[#-1].instanceId') IS claimed_by THEN attempts ELSE {record} END",
        params,
    )


def completion(now_ms: int, next_run_at_ms: int | None, result: Any = None) -> tuple[str, tuple[Any, ...]]:
    """An owner's completion: the job completed, or (a schedule's next run) pending again.
    ``result`` (not None: a checked JSON value) is stored as the job's result; a schedule's
    run that returns None clears the last run's. Params: the returned ones, then the owned
    update's."""
    if next_run_at_ms is None:
        done, params = completed_one_off(now_ms)
        if result is not None:
            return f"status = 'completed', updated_at = ?, result = ?, {done}", (now_ms, _json(result), *params)
        return f"status = 'completed', updated_at = ?, {done}", (now_ms, *params)
    done, params = completed_attempt(now_ms)
    return (
        f"status = 'pending', next_run_at = ?, fail_count = 0, updated_at = ?, result = ?, {done}",
        (next_run_at_ms, now_ms, None if result is None else _json(result), *params),
    )


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def failure(
    now_ms: int,
    fail_count: int,
    reason: str,
    retry_at_ms: int | None,
    attempt: tuple[str, str | None] | None,
    error_group: str | None,
) -> tuple[str, tuple[Any, ...]]:
    """An owner's failure: failed for good, or pending again at ``retry_at_ms``. ``attempt``:
    the attempt's JSON record and error type, when the caller has one (else the record is
    built in SQL from the row)."""
    attempt_record, attempt_error_type = (None, None) if attempt is None else attempt
    if attempt_record is not None:
        record, record_params = append_attempt("?", (attempt_record,))
    else:
        record, record_params = append_attempt(
            *row_attempt("retrying" if retry_at_ms is not None else "failed", now_ms)
        )
    error = f"error_type = ?, error_group = ?, attempts = {record}"
    error_params = (attempt_error_type, error_group, *record_params)
    if retry_at_ms is None:
        return (
            f"status = 'failed', fail_count = ?, fail_reason = ?, updated_at = ?, {error}, {CLAIM_RELEASE}",
            (fail_count, reason, now_ms, *error_params),
        )
    return (
        f"status = 'pending', fail_count = ?, fail_reason = ?, next_run_at = ?, updated_at = ?, {error}, {CLAIM_RELEASE}",
        (fail_count, reason, retry_at_ms, now_ms, *error_params),
    )


def attempt_recorded(attempt_json: str) -> tuple[str, tuple[Any, ...]]:
    """An attempt's record appended (a shutdown that gives up on a running job)."""
    record, params = append_attempt("?", (attempt_json,))
    return f"attempts = {record}", params


def _marks(count: int) -> str:
    return ",".join("?" * count)


# -- intake -----------------------------------------------------------------------------------


def insert(t: Tables) -> str:
    """One new job. Params: id, name, data, next_run_at, repeat_interval, unique_key,
    created_at, updated_at, timeout_ms. A clash (id, or a live unique key) inserts nothing."""
    return (
        f"INSERT INTO {t.jobs} (id, name, data, status, next_run_at, fail_count, repeat_interval, "
        "unique_key, created_at, updated_at, timeout_ms, change_seq) "
        f"VALUES (?, ?, ?, 'pending', ?, 0, ?, ?, ?, ?, ?, {t.change_stamp}) ON CONFLICT DO NOTHING"
    )


def unique_holder(t: Tables, columns: str) -> str:
    """The live (pending or processing) job holding a name's unique key. Params: name, key."""
    return f"SELECT {columns} FROM {t.jobs} WHERE name = ? AND unique_key = ? AND status IN ('pending','processing')"


# -- a worker's writes ---------------------------------------------------------------------------


def claim_columns(t: Tables) -> str:
    """CLAIM_COLUMNS for a claim's RETURNING, the status through ``CLAIM_STATUS``."""
    return ", ".join(CLAIM_STATUS if column == "status" else column for column in CLAIM_COLUMNS)


def claim(t: Tables) -> str:
    """Claim up to a limit of a name's due jobs, earliest due first. Params: owner, now
    (locked_at), now (last_heartbeat), heartbeat_interval, now (updated_at), name, now, limit."""
    return (
        f"UPDATE {t.jobs} SET status = 'processing', claimed_by = ?, locked_at = ?, last_heartbeat = ?, "
        f"heartbeat_interval = ?, updated_at = ?, change_seq = {t.change_stamp} WHERE id IN (SELECT id FROM {t.jobs} "
        "WHERE name = ? AND status = 'pending' AND next_run_at <= ? ORDER BY next_run_at LIMIT ?) "
        f"RETURNING {claim_columns(t)}"
    )


def fail_unreadable(t: Tables) -> str:
    """Mark a claimed job whose row cannot be read failed, still guarded by the claim.
    Params: reason, now, id, owner."""
    return (
        f"UPDATE {t.jobs} SET status = 'failed', fail_reason = ?, updated_at = ?, {CLAIM_RELEASE}, "
        f"change_seq = {t.change_stamp} "
        "WHERE id = ? AND status = 'processing' AND claimed_by = ? RETURNING id, name, next_run_at"
    )


def owned_update(t: Tables, assignments: str) -> str:
    """``assignments`` on one job, only while it is still processing and still the owner's.
    Params: the assignments', then id, owner."""
    return (
        f"UPDATE {t.jobs} SET {assignments}, change_seq = {t.change_stamp} "
        "WHERE id = ? AND status = 'processing' AND claimed_by = ? "
        f"RETURNING {t.columns}"
    )


def complete_owned(t: Tables, record: str, count: int) -> str:
    """Complete ``count`` jobs of one owner (one-off ones: ``record`` is ``completed_one_off``'s
    text). Params: now, the record's, the ids, owner."""
    return (
        f"UPDATE {t.jobs} SET status = 'completed', updated_at = ?, {record}, change_seq = {t.change_stamp} "
        f"WHERE id IN ({_marks(count)}) AND status = 'processing' "
        "AND claimed_by = ? RETURNING id"
    )


def release(t: Tables, count: int) -> str:
    """Give ``count`` of an owner's jobs back to the queue. Params: now, the ids, owner."""
    return (
        f"UPDATE {t.jobs} SET status = 'pending', updated_at = ?, {CLAIM_RELEASE}, change_seq = {t.change_stamp} "
        f"WHERE id IN ({_marks(count)}) AND status = 'processing' AND claimed_by = ? "
        f"RETURNING {t.columns}"
    )


def heartbeat(t: Tables, some: bool) -> str:
    """An owner's beat on its processing jobs. Params: now, now, owner, and with ``some``
    one JSON array of ids (no limit on bound parameters however many jobs run)."""
    sql = (
        f"UPDATE {t.jobs} SET last_heartbeat = ?, updated_at = ?, change_seq = {t.change_stamp} "
        "WHERE claimed_by = ? AND status = 'processing'"
    )
    return sql + " AND id IN (SELECT value FROM json_each(?))" if some else sql


def recover_stale(t: Tables, record: str) -> str:
    """Give back every processing job whose liveness (the heartbeat; ``locked_at`` where a
    job has none, e.g. a foreign writer's claim) is older than a cutoff (ADR 0004), and every
    one that no owner can ever complete or beat: no liveness instant at all, or no owner
    (an import or a hand edit; issue 34). Params: now, the record's (``stale_attempt``), cutoff."""
    return (
        f"UPDATE {t.jobs} SET status = 'pending', updated_at = ?, {record}, {CLAIM_RELEASE}, "
        f"change_seq = {t.change_stamp} "
        "WHERE status = 'processing' AND (coalesce(last_heartbeat, locked_at) < ? "
        "OR coalesce(last_heartbeat, locked_at) IS NULL OR coalesce(claimed_by, '') = '') "
        f"RETURNING {t.columns}"
    )


#: A processing row's claim instant that stale recovery cannot compare with a cutoff (text,
#: or a real, written by hand): text sorts after every integer, so it was never stale.
_BAD_INSTANT = "({0} IS NOT NULL AND typeof({0}) <> 'integer')"
_BAD_CLAIM_INSTANTS = f"({_BAD_INSTANT.format('last_heartbeat')} OR {_BAD_INSTANT.format('locked_at')})"


def malformed_claims(t: Tables) -> str:
    """Processing rows with an instant stale recovery cannot use (the partial processing
    index holds them all, so this reads the few jobs being processed)."""
    return (
        f"SELECT id, last_heartbeat, locked_at FROM {t.jobs} "
        f"WHERE status = 'processing' AND {_BAD_CLAIM_INSTANTS} ORDER BY id"
    )


def repair_claims(t: Tables) -> str:
    """Such rows' bad instants set to now (the liveness clock restarts, as the MongoDB store
    repairs them: a job whose owner still beats keeps running, one whose owner is gone is
    recovered a lock timeout later). Params: now, now, the ids as one JSON array."""
    keep = "CASE WHEN typeof({0}) IN ('integer', 'null') THEN {0} ELSE ? END"
    return (
        f"UPDATE {t.jobs} SET last_heartbeat = {keep.format('last_heartbeat')}, "
        f"locked_at = {keep.format('locked_at')}, change_seq = {t.change_stamp} "
        f"WHERE id IN (SELECT value FROM json_each(?)) AND status = 'processing' AND {_BAD_CLAIM_INSTANTS}"
    )


def release_owner(t: Tables) -> str:
    """Give back every job one (dead) owner holds. Params: now, owner."""
    return (
        f"UPDATE {t.jobs} SET status = 'pending', updated_at = ?, {CLAIM_RELEASE}, "
        f"change_seq = {t.change_stamp} WHERE claimed_by = ? AND status = 'processing' "
        f"RETURNING {t.columns}"
    )


def has_live_claim(t: Tables) -> str:
    """Params: owner, heartbeat_after (a heartbeat at it counts: upstream's ``$gte``)."""
    return f"SELECT 1 FROM {t.jobs} WHERE claimed_by = ? AND status = 'processing' AND last_heartbeat >= ? LIMIT 1"


def next_due(t: Tables, names: int) -> str:
    """The earliest pending job's due time among ``names`` names. Params: the names."""
    return (
        f"SELECT min(next_run_at) FROM {t.jobs} WHERE status = 'pending' AND name IN ({_marks(names)}) "
        f"AND next_run_at {INTEGERS_ONLY}"
    )


# -- management of single jobs ---------------------------------------------------------------

#: The statuses each guarded action may touch, as its statement binds them: the one
#: definition in ``store/guards.py`` (the scheduler and the MongoDB store read it too).
CANCEL_GUARD = guards.values(guards.CANCEL)
RETRY_GUARD = guards.values(guards.RETRY)
RESCHEDULE_GUARD = guards.values(guards.RESCHEDULE)
#: The retry guard as SQL literals, for text that reads before it writes.
_RETRYABLE = ",".join(f"'{status}'" for status in RETRY_GUARD)

CANCEL = "status = 'cancelled', updated_at = ?"
RESCHEDULE = "next_run_at = ?, updated_at = ?"
#: A retry of one job. Params: next_run_at, updated_at.
RETRY = (
    "status = 'pending', fail_count = 0, next_run_at = ?, updated_at = ?, fail_reason = NULL, "
    f"error_type = NULL, error_group = NULL, {CLAIM_RELEASE}"
)
#: A bulk retry, spread over a window. Params: now, spread (at least 1), now.
RETRY_MANY = (
    f"status = 'pending', fail_count = 0, fail_reason = NULL, error_type = NULL, error_group = NULL, "
    f"{CLAIM_RELEASE}, "
    "next_run_at = ? + (random() & 9223372036854775807) % ?, updated_at = ?"
)


def guarded_single(t: Tables, assignments: str, statuses: int) -> str:
    """``assignments`` on one job, only while its status is one of ``statuses`` values.
    Params: the assignments', then id, the statuses."""
    return (
        f"UPDATE {t.jobs} SET {assignments}, change_seq = {t.change_stamp} "
        f"WHERE id = ? AND status IN ({_marks(statuses)}) "
        f"RETURNING {t.columns}"
    )


def retry_before(t: Tables) -> str:
    """What a retry must know before it writes. Params: id."""
    return (
        "SELECT status, name, unique_key, fail_count, error_group, error_type "
        f"FROM {t.jobs} WHERE id = ? AND status IN ({_RETRYABLE})"
    )


def live_key_holder(t: Tables) -> str:
    """The id of a live job holding a name's unique key. Params: name, key."""
    return f"SELECT id FROM {t.jobs} WHERE name = ? AND unique_key = ? AND status IN ('pending','processing') LIMIT 1"


# -- bulk actions and retention, in chunks ---------------------------------------------------------


def affected_table(t: Tables) -> str:
    """The temp table a bulk update collects its ids in (SQLite's temp store, not Python)."""
    return f"temp.{t.jobs}_affected"


def create_affected(t: Tables) -> str:
    return f"CREATE TEMP TABLE IF NOT EXISTS {t.jobs}_affected (id TEXT PRIMARY KEY) WITHOUT ROWID"


def collect_affected(t: Tables, where: str) -> str:
    return f"INSERT INTO {affected_table(t)} (id) SELECT id FROM {t.jobs} WHERE {where}"


def clash_candidates(t: Tables) -> str:
    """The collected jobs that have a unique key, grouped by it."""
    return (
        f"SELECT a.id, a.name, a.unique_key FROM {t.jobs} a WHERE a.id IN (SELECT id FROM {affected_table(t)}) "
        "AND a.unique_key IS NOT NULL ORDER BY a.name, a.unique_key, a.id"
    )


def selected_ids(t: Tables, where: str) -> str:
    return f"SELECT id FROM {t.jobs} WHERE {where} ORDER BY id"


def chunk_where(where: str) -> str:
    """One chunk of a bulk action: its ids, the selector again, and the position the ids were
    read at (ADR 0015). Params: the ids as one JSON array, the selector's, the position."""
    return f"id IN (SELECT value FROM json_each(?)) AND ({where}) AND change_seq <= ?"


def retention_names(t: Tables) -> str:
    """The names with jobs of a status (kept counts). Params: status."""
    return f"SELECT name FROM {t.counts} WHERE status = ? AND jobs > 0 ORDER BY name"


def retention_chunk(t: Tables, limit: int) -> str:
    """Up to ``limit`` finished jobs of one name and status, last updated before a cutoff: a
    seek on the finished index (name, status, updated_at). Params: name, status, cutoff."""
    return (
        f"id IN (SELECT id FROM {t.jobs} WHERE name = ? AND status = ? AND {FINISHED} AND updated_at < ? LIMIT {limit})"
    )


def lease_read(t: Tables) -> str:
    return f"SELECT value FROM {t.meta} WHERE key = 'retention_lease'"


def lease_write(t: Tables) -> str:
    """Params: holder:expiry."""
    return f"INSERT OR REPLACE INTO {t.meta} (key, value) VALUES ('retention_lease', ?)"


def lease_end(t: Tables) -> str:
    """Params: the holder's token as a LIKE prefix (escaped with ``!``)."""
    return f"DELETE FROM {t.meta} WHERE key = 'retention_lease' AND value LIKE ? ESCAPE '!'"


# -- reads ------------------------------------------------------------------------------------


def by_id(t: Tables) -> str:
    return f"SELECT {t.columns} FROM {t.jobs} WHERE id = ?"


def by_ids(t: Tables, count: int) -> str:
    return f"SELECT {t.columns} FROM {t.jobs} WHERE id IN ({_marks(count)})"


def found(t: Tables, where: str) -> str:
    """Selected jobs in claim order. Params: the selector's, limit, skip."""
    return f"SELECT {t.columns} FROM {t.jobs} WHERE {where} ORDER BY next_run_at, id LIMIT ? OFFSET ?"


def count(t: Tables, where: str) -> str:
    return f"SELECT count(*) FROM {t.jobs} WHERE {where}"


def count_as_of(t: Tables, where: str) -> str:
    """A count and the change table's last sequence number, in one statement (one snapshot)."""
    return f"SELECT count(*), ({t.bulk_bound}) FROM {t.jobs} WHERE {where}"


def error_group_sample(t: Tables) -> str:
    return f"SELECT fail_reason FROM {t.jobs} WHERE error_group = ? AND {ERROR_MEMBER} LIMIT 1"


def _members_of_kept_row(t: Tables, since: bool) -> tuple[str, str]:
    """The errors index's source (``m``) and the WHERE of one kept error count's members
    (``c``: the error counts row): equal on the index's first three columns, so with a status
    an index seek, not a walk over the group's members. ``ERROR_MEMBER`` names only job
    columns (the counts table has none of those names), as the partial index needs."""
    seek = (
        f"m.error_group = c.group_key AND m.name = c.name AND m.error_type IS nullif(c.error_type, {NO_ERROR_TYPE}) "
        f"AND {ERROR_MEMBER}"
    )
    return f"{t.jobs} AS m INDEXED BY {t.jobs}_errors", seek + (" AND updated_at >= :since" if since else "")


def error_group_totals(t: Tables, by_name: bool, since: bool) -> str:
    """Per kept error count (schema version 6): group key, name, error type, failed and
    retrying members, and the first and last ``updated_at`` of the failed and of the retrying
    ones: four seeks into the errors index (min and max of ``updated_at`` under an equal
    prefix ``(group, name, type, status)``), so O(groups), whatever the failures. With
    ``since`` the counts are range counts too (members since, as the view's filter asks).
    Named parameters: ``:name``, ``:since``."""
    source, seek = _members_of_kept_row(t, since)

    def one(what: str, status: str) -> str:
        bound = f" AND updated_at {INTEGERS_ONLY}" if what != "count(*)" else ""
        return f"(SELECT {what} FROM {source} WHERE {seek} AND status = '{status}'{bound})"

    counts = f"{one('count(*)', 'failed')}, {one('count(*)', 'pending')}" if since else "c.failed, c.retrying"
    return (
        f"SELECT c.group_key, c.name, nullif(c.error_type, {NO_ERROR_TYPE}), {counts}, "
        f"{one('min(updated_at)', 'failed')}, {one('max(updated_at)', 'failed')}, "
        f"{one('min(updated_at)', 'pending')}, {one('max(updated_at)', 'pending')} "
        f"FROM {t.error_counts} AS c WHERE (c.failed != 0 OR c.retrying != 0)"
        + (" AND c.name = :name" if by_name else "")
    )


def error_group_minutes(t: Tables, by_name: bool, since: bool) -> str:
    """Members per kept error count and minute since ``:hour`` (the last hour's activity):
    a range of the errors index per group and status. Rows: group key, minute bucket,
    members, retrying ones. Named parameters: ``:hour``, ``:name``, ``:since``."""
    source, seek = _members_of_kept_row(t, since)
    return (
        "SELECT c.group_key, (updated_at - :hour) / 60000 AS bucket, count(*), sum(status = 'pending') "
        f"FROM {t.error_counts} AS c JOIN {source} ON {seek} AND status IN ('failed','pending') "
        "AND updated_at >= :hour WHERE (c.failed != 0 OR c.retrying != 0)"
        + (" AND c.name = :name" if by_name else "")
        + " GROUP BY c.group_key, bucket"
    )


def pending_health(t: Tables) -> str:
    """Due and later pending jobs per name, and processing ones, from the partial indexes
    (pending: name, next_run_at; processing: claimed_by, locked_at). Params: now, now, now."""
    return (
        "SELECT name, sum(next_run_at <= ?), sum(next_run_at > ?), "
        f"min(CASE WHEN next_run_at <= ? THEN next_run_at END), 0 FROM {t.jobs} WHERE status = 'pending' GROUP BY name "
        f"UNION ALL SELECT name, 0, 0, NULL, count(*) FROM {t.jobs} WHERE status = 'processing' GROUP BY name"
    )


# -- fleet and queue control ------------------------------------------------------------------

_INSTANCE_COLUMNS = (
    "id, host, pid, version, started_at, heartbeat_interval, workers, running, processed, failed, last_heartbeat, "
    "supervisor"
)


def upsert_instance(t: Tables) -> str:
    return f"INSERT OR REPLACE INTO {t.instances} ({_INSTANCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def remove_instance(t: Tables) -> str:
    return f"DELETE FROM {t.instances} WHERE id = ?"


def instances(t: Tables) -> str:
    return f"SELECT {_INSTANCE_COLUMNS} FROM {t.instances} ORDER BY id"


def instance(t: Tables) -> str:
    return f"SELECT {_INSTANCE_COLUMNS} FROM {t.instances} WHERE id = ?"


def purge_instances(t: Tables) -> str:
    return f"DELETE FROM {t.instances} WHERE last_heartbeat < ?"


def owner_holdings(t: Tables) -> str:
    """Jobs per owner, from the partial processing index (claimed_by, locked_at), with each
    owner's longest-running job (its earliest claim: one seek of that index per owner)."""
    longest = (
        f"SELECT o.id FROM {t.jobs} o WHERE o.status = 'processing' AND o.claimed_by = j.claimed_by "
        "AND typeof(o.locked_at) = 'integer' ORDER BY o.locked_at LIMIT 1"
    )
    return (
        f"SELECT claimed_by, count(*), max({_LIVENESS}), max({_INTEGER.format('heartbeat_interval')}), "
        f"({longest}), min({_INTEGER.format('locked_at')}) "
        f"FROM {t.jobs} j WHERE status = 'processing' AND claimed_by <> '' GROUP BY claimed_by ORDER BY claimed_by"
    )


#: A column's value where it is an integer, else NULL: owners and their stamps are read for
#: arithmetic (``OwnerRecords``), and a hand-edited text stamp must not fail ``instances()``.
_INTEGER = "CASE WHEN typeof({0}) = 'integer' THEN {0} END"
#: A processing job's liveness instant as stale recovery reads it, where it is an integer.
_LIVENESS = (
    f"CASE WHEN last_heartbeat IS NULL THEN {_INTEGER.format('locked_at')} ELSE {_INTEGER.format('last_heartbeat')} END"
)


def owner_jobs(t: Tables) -> str:
    """One owner's jobs and their liveness stamps. Params: owner."""
    return (
        f"SELECT id, {_INTEGER.format('last_heartbeat')}, {_INTEGER.format('locked_at')}, "
        f"{_INTEGER.format('heartbeat_interval')} FROM {t.jobs} "
        "WHERE claimed_by = ? AND status = 'processing' ORDER BY id"
    )


def pause(t: Tables) -> str:
    return f"INSERT OR IGNORE INTO {t.control} (name, paused_at) VALUES (?, ?)"


def unpause(t: Tables) -> str:
    return f"DELETE FROM {t.control} WHERE name = ?"


def paused_names(t: Tables) -> str:
    return f"SELECT name, paused_at FROM {t.control} ORDER BY name"


def add_outcomes(t: Tables) -> str:
    """Params per row: name, minute, completed, failed."""
    return (
        f"INSERT INTO {t.counters} (name, minute, completed, failed) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (name, minute) DO UPDATE SET completed = completed + excluded.completed, "
        "failed = failed + excluded.failed"
    )


def outcomes(t: Tables, by_name: bool) -> str:
    """Params: since minute (and the name)."""
    name = " AND name = ?" if by_name else ""
    return f"SELECT name, minute, completed, failed FROM {t.counters} WHERE minute >= ?{name} ORDER BY name, minute"


def error_attempts_first(t: Tables) -> str:
    """Each listed counter row name's first minute: one seek per name on the (name, minute)
    key (``min`` over an equal prefix; a GROUP BY read every row of every name). Params: the
    names as a JSON array."""
    return (
        f"SELECT n.value, (SELECT min(minute) FROM {t.counters} WHERE name = n.value) "
        "FROM json_each(?) AS n WHERE n.value IS NOT NULL"
    )


def error_attempts_since(t: Tables, count: int) -> str:
    """Each listed counter row name's failed attempts per minute from a minute on: a range
    per name on the (name, minute) key. Params: ``count`` names, the minute."""
    return (
        f"SELECT name, minute, failed FROM {t.counters} WHERE name IN ({_marks(count)}) AND minute >= ? AND failed > 0"
    )


def purge_outcomes(t: Tables) -> str:
    return f"DELETE FROM {t.counters} WHERE minute < ?"


class Prepared:
    """The hot paths' statements for one collection, built once per open (not per call)."""

    __slots__ = ("claim", "insert", "set_timeout", "unique_holder")

    def __init__(self, t: Tables) -> None:
        self.claim = claim(t)
        self.insert = insert(t)
        #: A bulk insert's jobs with a time limit of their own. Params: timeout_ms, id.
        self.set_timeout = f"UPDATE {t.jobs} SET timeout_ms = ?, change_seq = {t.change_stamp} WHERE id = ?"
        self.unique_holder = unique_holder(t, t.columns)
