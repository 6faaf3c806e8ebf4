"""SQL text for selectors, listing filters and keyset pages.

Kept apart from the store so the statement shapes can be read (and tested) on their own.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...cursor import CursorAnchor
from ...job import STATUS_BY_VALUE, CursorDirection, Job, JobSort
from ..base import StoreListFilter, StoreSelector

SORT_COLUMNS = {"id": "id", "created_at": "created_at", "updated_at": "updated_at", "next_run_at": "next_run_at"}
_loads = json.loads


def row_to_job(row: tuple[Any, ...]) -> Job:
    """Build a Job from a row in JOB_COLUMNS order (positional: this runs once per job)."""
    data = row[2]
    return Job(
        row[0], row[1], None if data is None else _loads(data), STATUS_BY_VALUE[row[3]], row[4],
        row[13], row[14], row[9], row[5], row[6], row[7], row[8], row[10], row[11], row[12],
    )


def _in(column: str, values: tuple[Any, ...], params: list[Any]) -> str:
    if not values:
        return "0"
    params.extend(v.value if hasattr(v, "value") else v for v in values)
    return f"{column} IN ({','.join('?' * len(values))})"

_HEX = re.compile(r"[0-9a-f]{1,24}")


def selector_where(selector: StoreSelector) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if selector.name is not None:
        clauses.append("name = ?")
        params.append(selector.name)
    if selector.statuses is not None:
        clauses.append(_in("status", selector.statuses, params))
    if selector.created_before_ms is not None:
        clauses.append("created_at < ?")
        params.append(selector.created_before_ms)
    if selector.created_after_ms is not None:
        clauses.append("created_at > ?")
        params.append(selector.created_after_ms)
    if selector.updated_before_ms is not None:
        clauses.append("updated_at < ?")
        params.append(selector.updated_before_ms)
    return (" AND ".join(clauses) or "1"), params


def filter_where(filter: StoreListFilter) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filter.name is not None:
        clauses.append("name = ?")
        params.append(filter.name)
    if filter.statuses is not None:
        clauses.append(_in("status", filter.statuses, params))
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
            # Ours: the id's tail matches too (consoles show the last 8 hex digits, which must be searchable).
            clauses.append("(id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' OR instr(unique_key, ?) > 0)")
            params.extend((escaped + "%", "%" + escaped, filter.search))
        else:
            clauses.append("(id LIKE ? ESCAPE '\\' OR instr(unique_key, ?) > 0)")
            params.extend((escaped + "%", filter.search))
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
    where, params = filter_where(filter)
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
    return f"SELECT {columns} FROM {table} WHERE {where} ORDER BY {order_by} LIMIT ?", params
