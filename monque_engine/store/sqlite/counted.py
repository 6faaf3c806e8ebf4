"""Reads the kept counts answer (journal.py): counts, stats and names in O(names), not O(jobs).

A count whose filter is only a name (or a name glob) and statuses is a sum over the counts
table plus the inbox's rows (jobs whose enqueue returned but which are not moved into the job
table yet, always pending). Both are read in one statement, so in one snapshot. Anything the
counts do not hold (time ranges, text, ids, error groups) is counted from the job table.
"""

from __future__ import annotations

from typing import Any

from ...job import JobStatus
from ..base import StoreListFilter, StoreSelector
from .queries import status_clause
from .schema import INTEGERS_ONLY, Tables


def filter_answerable(filter: StoreListFilter) -> bool:
    """Only a name, a name glob and statuses: what the counts table is keyed by."""
    return (
        filter.created_from_ms is None
        and filter.created_to_ms is None
        and filter.updated_from_ms is None
        and filter.updated_to_ms is None
        and filter.next_run_from_ms is None
        and filter.next_run_to_ms is None
        and not filter.search
        and filter.recurring is None
        and not filter.text
        and filter.error_group is None
        and not filter.data
    )


def selector_answerable(selector: StoreSelector) -> bool:
    return (
        selector.created_before_ms is None
        and selector.created_after_ms is None
        and selector.updated_before_ms is None
        and selector.error_group is None
        and not selector.text
        and selector.as_of is None
        and (selector.listing is None or filter_answerable(selector.listing))
    )


Names = list[tuple[str | None, str | None]]


def _name_status_where(names: Names, statuses: tuple[JobStatus, ...] | None) -> tuple[str, str, list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    for name, pattern in names:
        if name is not None:
            where.append("name = ?")
            params.append(name)
        if pattern is not None:
            where.append("name GLOB ?")
            params.append(pattern.replace("[", "[[]"))  # as queries.filter_where: only * and ? are wildcards
    status_where = "1" if statuses is None else status_clause(statuses, finished_index=False)
    return " AND ".join(where) or "1", status_where, params


def count_sql(tables: Tables, names: Names, statuses: tuple[JobStatus, ...] | None) -> tuple[str, list[Any]]:
    """``SELECT`` one value: the jobs of every ``(name, glob)`` condition in ``names`` (all of
    them must hold), in ``statuses`` (None: any)."""
    name_where, status_where, params = _name_status_where(names, statuses)
    sql = f"SELECT coalesce((SELECT sum(jobs) FROM {tables.counts} WHERE {name_where} AND {status_where}), 0)"
    if statuses is None or JobStatus.PENDING in statuses:
        sql += f" + (SELECT count(*) FROM main.{tables.inbox} WHERE {name_where})"
        params = params + params
    return sql, params


def status_counts_sql(tables: Tables, names: Names, statuses: tuple[JobStatus, ...] | None) -> tuple[str, list[Any]]:
    """``(status, jobs)`` rows for the same jobs as ``count_sql`` (a status may come twice:
    the counts' pending jobs and the inbox's)."""
    name_where, status_where, params = _name_status_where(names, statuses)
    sql = f"SELECT status, sum(jobs) FROM {tables.counts} WHERE {name_where} AND {status_where} GROUP BY status"
    if statuses is None or JobStatus.PENDING in statuses:
        sql += f" UNION ALL SELECT 'pending', count(*) FROM main.{tables.inbox} WHERE {name_where}"
        params = params + params
    return sql, params


def target_names_statuses(target: StoreListFilter | StoreSelector) -> tuple[Names, tuple[JobStatus, ...] | None]:
    """The name conditions and statuses of a listing filter or a bulk selector (its guard and
    its listing's statuses intersected): what the counts table is keyed by."""
    if isinstance(target, StoreListFilter):
        return [(target.name, target.name_pattern)], target.statuses
    names: Names = [(target.name, None)]
    statuses = target.statuses
    if target.listing is not None:
        names.append((target.listing.name, target.listing.name_pattern))
        if target.listing.statuses is not None:
            wanted = set(target.listing.statuses)
            statuses = tuple(s for s in (statuses or tuple(JobStatus)) if s in wanted)
    return names, statuses


def filter_count_sql(tables: Tables, filter: StoreListFilter) -> tuple[str, list[Any]]:
    return count_sql(tables, *target_names_statuses(filter))


def selector_count_sql(tables: Tables, selector: StoreSelector) -> tuple[str, list[Any]]:
    return count_sql(tables, *target_names_statuses(selector))


def stats_sql(tables: Tables, by_name: str | None) -> tuple[str, list[Any]]:
    """``(name, status, jobs, completed duration ms)`` rows: the counts plus the inbox's
    pending jobs (a name may come twice)."""
    name_where = "1" if by_name is None else "name = ?"
    params: list[Any] = [] if by_name is None else [by_name, by_name]
    sql = (
        f"SELECT name, status, jobs, duration_ms FROM {tables.counts} WHERE {name_where} AND jobs != 0 "
        f"UNION ALL SELECT name, 'pending', count(*), 0 FROM main.{tables.inbox} WHERE {name_where} GROUP BY name"
    )
    return sql, params


def names_sql(tables: Tables) -> str:
    return f"SELECT name FROM {tables.counts} WHERE jobs > 0 UNION SELECT name FROM main.{tables.inbox} ORDER BY name"


def pending_split_sql(tables: Tables) -> str:
    """One name's pending jobs due by a time and due later, each counted up to a cap, and
    the earliest and latest run times: four seeks into the partial pending index (name,
    next_run_at), so a 10M-job backlog costs what 2 × cap index entries cost. Parameters:
    name, now, cap, name, now, cap, name, name."""
    pending = f"FROM {tables.jobs} WHERE status = 'pending' AND name = ?"
    return (
        f"SELECT (SELECT count(*) FROM (SELECT 1 {pending} AND next_run_at <= ? LIMIT ?)), "
        f"(SELECT count(*) FROM (SELECT 1 {pending} AND next_run_at > ? LIMIT ?)), "
        f"(SELECT min(next_run_at) {pending} AND next_run_at {INTEGERS_ONLY}), "
        f"(SELECT max(next_run_at) {pending} AND next_run_at {INTEGERS_ONLY})"
    )
