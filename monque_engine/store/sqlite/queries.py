"""SQL text for selectors, listing filters and keyset pages.

Kept apart from the store so the statement shapes can be read (and tested) on their own.
"""

from __future__ import annotations

import json
import json.scanner
import re
import sqlite3
from typing import Any

from ...attempts import MAX_ATTEMPTS, AppendedHistory
from ...cursor import CursorAnchor
from ...job import STATUS_BY_VALUE, CursorDirection, Job, JobSort, JobStatus
from ...payload_filter import DataTerm
from ...run_progress import Progress
from ...textsearch import escaped, fold, may_span_tokens, stored_payload_contains
from ..base import StoreListFilter, StoreSelector
from . import jobrow
from .schema import ERROR_MEMBER, FINISHED
from .unreadable import unreadable_row

#: The C scanner ``json.loads`` ends up in, called directly for payloads (see ``_decode``).
_scan_json = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: any context with the decoder attributes


def _decode(text: Any) -> Any:
    """``json.loads(text)``, ~1 µs less per claimed job (a drain decodes every payload).

    The payloads the stores write are compact JSON, which the C scanner takes whole; what
    it does not (leading or trailing whitespace, bytes, bad text written by hand) goes
    through ``json.loads``, so the value or the error is exactly that call's.
    """
    try:
        value, end = _scan_json(text, 0)
    except (StopIteration, TypeError):
        return _loads(text)
    if end != len(text):
        return _loads(text)
    return value


SORT_COLUMNS = {
    "id": "id",
    "created_at": "created_at",
    "updated_at": "updated_at",
    "next_run_at": "next_run_at",
    "locked_at": "locked_at",
}
_loads = json.loads


def row_to_job(row: tuple[Any, ...]) -> Job:
    """Build a Job from a job row (``Tables.columns``), checking first that every INTEGER column
    holds an integer (NULL where it may).

    SQLite keeps what a hand edit wrote (``created_at = 'soon'``): such a Job would fail a
    comparison far from here (an export's sort, a console's age, ``instances()``), so the
    row is unreadable instead, as one whose payload is not JSON (issue 34). A claim's rows
    are checked in SQL (``CLAIM_STATUS``) and built by ``claimed_row_to_job``: the drain path
    pays nothing for it.
    """
    if (
        type(row[jobrow.NEXT_RUN_AT])
        is type(row[jobrow.FAIL_COUNT])
        is type(row[jobrow.CREATED_AT])
        is type(row[jobrow.UPDATED_AT])
        is int
        and type(row[jobrow.LOCKED_AT]) in _INTEGER_OR_NULL
        and type(row[jobrow.LAST_HEARTBEAT]) in _INTEGER_OR_NULL
        and type(row[jobrow.HEARTBEAT_INTERVAL]) in _INTEGER_OR_NULL
        and type(row[jobrow.TIMEOUT_MS]) in _INTEGER_OR_NULL
        and type(row[jobrow.OVER_LIMIT_AT]) in _INTEGER_OR_NULL
        and type(row[jobrow.STOP_REQUESTED_AT]) in _INTEGER_OR_NULL
        and type(row[jobrow.NAME]) is str
    ):
        return claimed_row_to_job(row)
    raise unreadable_row(row, TypeError("a column holds a value of another type"))


_INTEGER_OR_NULL = frozenset({int, type(None)})


def claimed_row_to_job(row: tuple[Any, ...]) -> Job:
    """Build a Job from a job row (``Tables.columns``) whose column types are known to be
    right (``row_to_job`` checks them; a claim's SQL does).

    This runs once per job, so it unpacks the row into names (one step, cheaper than a
    subscript per field); the names are ``JOB_COLUMNS`` in order (a test holds them to it).

    A completed row that still names its claim is a one-off completion that recorded its
    attempt in the claim fields (``statements.COMPLETED_ONE_OFF``): those become the last
    ``Attempt`` and read as cleared, exactly as the MongoDB store's document has them.

    A row this cannot read (a payload that is not JSON, a status written by hand) raises
    InvalidJobDocumentError naming the column; the try costs nothing on good rows.
    """
    try:
        (
            id_, name, data, status, next_run_at, locked_at, claimed_by, last_heartbeat,
            heartbeat_interval, fail_count, fail_reason, repeat_interval, unique_key,
            created_at, updated_at, attempts, error_type, error_group, timeout_ms, over_limit_at,
            stop_requested_at, progress, result,
        ) = row  # fmt: skip
        if claimed_by is not None and status == "completed":
            return Job(
                id_,
                name,
                None if data is None else _decode(data),
                STATUS_BY_VALUE[status],
                next_run_at,
                created_at,
                updated_at,
                fail_count,
                None,
                None,
                last_heartbeat,
                heartbeat_interval,
                fail_reason,
                repeat_interval,
                unique_key,
                AppendedHistory(attempts, fail_count + 1, claimed_by, locked_at, updated_at),
                error_type,
                error_group,
                timeout_ms,
                over_limit_at,
                stop_requested_at,
                None if progress is None else Progress.from_json(progress),
                None if result is None else stored_result(result),
            )
        return Job(
            id_,
            name,
            None if data is None else _decode(data),
            STATUS_BY_VALUE[status],
            next_run_at,
            created_at,
            updated_at,
            fail_count,
            locked_at,
            claimed_by,
            last_heartbeat,
            heartbeat_interval,
            fail_reason,
            repeat_interval,
            unique_key,
            attempts,
            error_type,
            error_group,
            timeout_ms,
            over_limit_at,
            stop_requested_at,
            None if progress is None else Progress.from_json(progress),
            None if result is None else stored_result(result),
        )
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
        raise unreadable_row(row, error) from None


def claim_row_to_job(row: tuple[Any, ...]) -> Job:
    """``claimed_row_to_job`` for a claim's row (``CLAIM_COLUMNS``: the fields a run needs;
    the later fields of ours are the Job's defaults, None). Runs once per claimed job."""
    try:
        (
            id_, name, data, status, next_run_at, locked_at, claimed_by, last_heartbeat,
            heartbeat_interval, fail_count, fail_reason, repeat_interval, unique_key,
            created_at, updated_at, attempts, error_type, error_group, timeout_ms,
        ) = row  # fmt: skip
        return Job(
            id_,
            name,
            None if data is None else _decode(data),
            STATUS_BY_VALUE[status],
            next_run_at,
            created_at,
            updated_at,
            fail_count,
            locked_at,
            claimed_by,
            last_heartbeat,
            heartbeat_interval,
            fail_reason,
            repeat_interval,
            unique_key,
            attempts,
            error_type,
            error_group,
            timeout_ms,
        )
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
        raise unreadable_row(row, error) from None


def stored_result(text: str) -> Any:
    """A stored ``result`` column: the handler's JSON value, or None where a hand edit left
    text that is not JSON (a result is a report, never a reason to make the job unreadable)."""
    try:
        return _decode(text)
    except (ValueError, TypeError, RecursionError):
        return None


def append_attempt(record: str, params: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """SQL for ``attempts`` with the JSON object ``record`` appended (oldest dropped past
    ``MAX_ATTEMPTS``), and its parameters (``record`` appears twice: bind them twice).

    The usual case, a job without history, is plain text concatenation (~1 µs a row; the
    JSON functions cost ~4 µs, which a drain of no-op jobs would notice). A history that is
    not a valid JSON array (edited by hand) starts over rather than failing the outcome's write.
    """
    sql = (
        f"CASE WHEN attempts IS NULL THEN '[' || {record} || ']' ELSE json_insert("
        "CASE WHEN NOT json_valid(attempts) THEN '[]' WHEN json_type(attempts) <> 'array' THEN '[]' "
        f"WHEN json_array_length(attempts) >= {MAX_ATTEMPTS} THEN json_remove(attempts, '$[0]') "
        f"ELSE attempts END, '$[#]', json({record})) END"
    )
    return sql, params + params


def row_attempt(outcome: str, now_ms: int) -> tuple[str, tuple[Any, ...]]:
    """A record (JSON text) built from the row itself: the claim's lockedAt and claimedBy,
    failCount + 1, ending at ``now_ms``; the same fields ``Attempt.to_json`` writes (the
    SQLite form has no ``durationMs``: it is ``endedAt - startedAt``, and every byte of a
    completed row is written once per job)."""
    sql = (
        '(\'{"attempt":\' || (fail_count + 1) || \',"outcome":"' + outcome + '","instanceId":\' '
        "|| json_quote(claimed_by) || ',\"startedAt\":' || ifnull(locked_at, 'null') || ',\"endedAt\":' || ? "
        "|| '}')"
    )
    return sql, (now_ms,)


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


#: The SQL function ``textsearch.stored_payload_contains`` is registered as (``register_functions``).
PAYLOAD_CONTAINS = "monque_payload_contains"


def register_functions(conn: sqlite3.Connection) -> None:
    """Give a connection the Python functions this module's SQL calls."""
    conn.create_function(PAYLOAD_CONTAINS, 2, stored_payload_contains, deterministic=True)


def text_clause(text: str, params: list[Any]) -> str:
    """The payload, failReason or error type contains ``text`` as typed (``textsearch``).

    failReason and error type are plain text: ``LIKE`` answers exactly. The payload is JSON
    text, where ``LIKE`` on the needle as typed finds neither ``a"b`` (stored ``a\\"b``) nor a
    newline, and a lone backslash would match every escape. So ``LIKE`` looks for the needle
    as the encoder escapes it, which every match must contain, and the rows where that can
    still be wrong (a backslash in the row, or a needle that can span JSON's own characters)
    are decoded and searched value by value in Python. Most rows never reach Python.

    A scan (ADR 0008): no index can serve a substring, and an FTS5 trigram index would cost
    every insert far more than the drain budget allows. Bounded by the caller's page size
    for listings; counts and bulk actions read every candidate row. A NUL never gets here:
    ``LIKE`` stops reading its pattern at one, and the query validation refuses it.
    """
    plain = _like(text)
    payload = _like(escaped(text))
    folded = fold(text)
    decode = f"{PAYLOAD_CONTAINS}(CAST(data AS BLOB), ?)"
    check = decode if may_span_tokens(text) else f"(instr(data, '\\') = 0 OR {decode})"
    params.extend((payload, folded, plain, plain))
    return f"((data LIKE ? ESCAPE '\\' AND {check}) OR fail_reason LIKE ? ESCAPE '\\' OR error_type LIKE ? ESCAPE '\\')"


def data_clause(term: DataTerm, params: list[Any]) -> str:
    """One payload condition (``payload_filter``) with SQLite's JSON functions.

    ``json_type`` is NULL where the path is not there, a parent that is an array or a scalar
    included (``$.a.b`` never reaches into an array), and names the JSON type where it is:
    ``null``, ``true``, ``false``, ``integer``, ``real``, ``text``. A payload that is not
    valid JSON (a hand-written row) has no keys: ``json_valid`` first, as ``json_type`` would
    raise on it. No index serves it: read in steps as "contains" is (``scan.py``).
    """
    path = "$" + "".join(f'."{key}"' for key in term.path)
    kind = f"(CASE WHEN json_valid(data) THEN json_type(data, '{path}') END)"
    if term.op == "missing":
        return f"{kind} IS NULL"
    if term.op == "exists":
        return f"{kind} IS NOT NULL"
    value = term.value
    if value is None:
        return f"{kind} = 'null'"
    if isinstance(value, bool):
        return f"{kind} = '{'true' if value else 'false'}'"
    if isinstance(value, int | float):
        params.append(value)
        return f"({kind} IN ('integer', 'real') AND json_extract(data, '{path}') = ?)"
    params.append(value)
    return f"({kind} = 'text' AND json_extract(data, '{path}') = ?)"


def group_clause(key: str, params: list[Any]) -> str:
    """The failed and retrying members of one error group (the partial index's own terms)."""
    params.append(key)
    return f"error_group = ? AND {ERROR_MEMBER}"


def status_clause(statuses: tuple[Any, ...], finished_index: bool = True) -> str:
    """The statuses as SQL literals, never bound: SQLite matches a partial index's WHERE
    (``status = 'pending'``, ``status = 'processing'``, ...) only against literal terms, so
    ``status IN (?)`` scanned the whole table where the index holds the answer (a count of
    0 processing jobs read all 5M rows). The values are ``JobStatus`` members, so the
    literals are a closed set of five words. ``finished_index=False`` for sorted pages: there
    the sort index's walk, stopped at the page's end, beats reading every finished job of the
    status from the finished index to sort them."""
    if not statuses:
        return "0"
    words = sorted({JobStatus(status).value for status in statuses})
    clause = f"status = '{words[0]}'" if len(words) == 1 else f"status IN ({','.join(repr(w) for w in words)})"
    if finished_index and _FINISHED_WORDS.issuperset(words):
        clause += f" AND {FINISHED}"  # implied, and what lets the finished index answer
    return clause


_FINISHED_WORDS = frozenset({"completed", "failed", "cancelled"})


_HEX = re.compile(r"[0-9a-f]{1,24}")
#: Consoles show an id's last SHOWN_ID_DIGITS hex digits; SHOWN_ID_PART of them in a row find it.
SHOWN_ID_DIGITS = 8
SHOWN_ID_PART = 4


def selector_where(selector: StoreSelector, *, paging: bool = False) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if selector.name is not None:
        clauses.append("name = ?")
        params.append(selector.name)
    if selector.statuses is not None:
        clauses.append(status_clause(selector.statuses, not paging))
    if selector.created_before_ms is not None:
        clauses.append("created_at < ?")
        params.append(selector.created_before_ms)
    if selector.created_after_ms is not None:
        clauses.append("created_at > ?")
        params.append(selector.created_after_ms)
    if selector.updated_before_ms is not None:
        clauses.append("updated_at < ?")
        params.append(selector.updated_before_ms)
    if selector.as_of is not None:
        # Written at or before the count's position (schema.Tables.change_stamp): jobs the
        # count saw, unchanged since. The job table's column: a bounded read skips the inbox.
        clauses.append("change_seq <= ?")
        params.append(selector.as_of)
    if selector.error_group is not None:
        clauses.append(group_clause(selector.error_group, params))
    if selector.text:
        clauses.append(text_clause(selector.text, params))
    if selector.listing is not None:
        # Bulk on any listing filter: the listing's own WHERE, so bulk and listing agree.
        listing_where, listing_params = filter_where(selector.listing, paging=paging)
        clauses.append(f"({listing_where})")
        params.extend(listing_params)
    return (" AND ".join(clauses) or "1"), params


def filter_where(filter: StoreListFilter, *, paging: bool = False) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filter.name is not None:
        clauses.append("name = ?")
        params.append(filter.name)
    if filter.name_pattern is not None:
        # GLOB is case-sensitive like the other stores' match; "[" is its only other special
        # character, made literal here so that only * and ? are wildcards (JobListFilter).
        clauses.append("name GLOB ?")
        params.append(filter.name_pattern.replace("[", "[[]"))
    if filter.statuses is not None:
        clauses.append(status_clause(filter.statuses, not paging))
    bounds = (
        ("created_at", filter.created_from_ms, filter.created_to_ms),
        ("updated_at", filter.updated_from_ms, filter.updated_to_ms),
        ("next_run_at", filter.next_run_from_ms, filter.next_run_to_ms),
    )
    for column, low, high in bounds:
        if low is not None:
            clauses.append(f"{column} >= ?")
            params.append(low)
        if high is not None:
            clauses.append(f"{column} <= ?")
            params.append(high)
    if filter.recurring is not None:
        clauses.append("repeat_interval IS NOT NULL" if filter.recurring else "repeat_interval IS NULL")
    if filter.search:
        escaped = filter.search.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        if _HEX.fullmatch(filter.search.lower()):
            # Ours: the id's tail matches too (consoles show the last 8 hex digits, which must be
            # searchable), and SHOWN_ID_PART or more of those digits from anywhere in them (7 of
            # the 8 shown once matched nothing).
            lowered = filter.search.lower()
            if SHOWN_ID_PART <= len(lowered) <= SHOWN_ID_DIGITS:
                clauses.append("(id LIKE ? ESCAPE '\\' OR instr(substr(id, ?), ?) > 0 OR instr(unique_key, ?) > 0)")
                params.extend((escaped + "%", -SHOWN_ID_DIGITS, lowered, filter.search))
            else:
                clauses.append("(id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' OR instr(unique_key, ?) > 0)")
                params.extend((escaped + "%", "%" + escaped, filter.search))
        else:
            clauses.append("(id LIKE ? ESCAPE '\\' OR instr(unique_key, ?) > 0)")
            params.extend((escaped + "%", filter.search))
    if filter.error_group is not None:
        clauses.append(group_clause(filter.error_group, params))
    if filter.text:
        clauses.append(text_clause(filter.text, params))
    for term in filter.data or ():
        clauses.append(data_clause(term, params))
    return (" AND ".join(clauses) or "1"), params


def page_query(
    columns: str,
    table: str,
    filter: StoreListFilter,
    sort: JobSort,
    direction: CursorDirection,
    anchor: CursorAnchor | None,
    limit: int,
) -> tuple[str, list[Any]]:
    """One keyset page: rows strictly past the anchor, in traversal order."""
    where, params = filter_where(filter, paging=True)
    ascending = (sort.direction == "asc") == (direction == "forward")
    order = "ASC" if ascending else "DESC"
    op = ">" if ascending else "<"
    column = SORT_COLUMNS[sort.by]
    if anchor is not None:
        if sort.by == "id":
            where += f" AND id {op} ?"
            params.append(anchor.job_id)
        else:
            where += f" AND ({column}, id) {op} (?, ?)"
            params.extend((anchor.value_ms, anchor.job_id))
    order_by = "id " + order if sort.by == "id" else f"{column} {order}, id {order}"
    params.append(limit)
    if filter.error_group is not None:
        # A group may hold 50k jobs: pick the page's ids from the covering errors index
        # (every sort column is in it), then read only those rows. Selecting the rows
        # directly would read all 50k before sorting (~1 s at 1M jobs).
        picked = f"SELECT id FROM {table} WHERE {where} ORDER BY {order_by} LIMIT ?"
        return f"SELECT {columns} FROM {table} WHERE id IN ({picked}) ORDER BY {order_by}", params
    if filter.recurring:
        # Schedules are few, and the partial recurring index holds exactly them: read them
        # from it and sort those. Left to itself SQLite walked the sort index through every
        # job looking for them (the Queues view's page of schedules: 1.1 s at 10M jobs, none
        # recurring). Recurring jobs never wait in the inbox, so the job table is the source.
        source = f"{table} INDEXED BY {table}_recurring"
        return f"SELECT {columns} FROM {source} WHERE {where} ORDER BY {order_by} LIMIT ?", params
    return f"SELECT {columns} FROM {table} WHERE {where} ORDER BY {order_by} LIMIT ?", params
