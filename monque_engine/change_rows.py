"""A pull of the change feed as plain rows: for a consumer that reads every change of a busy store.

A console beside a worker draining 5,000 jobs/s reads ~15,000 changes a second (each job's
insert, claim and completion). Delivered one ``ChangeEvent`` at a time, each change cost it a
frozen object, a step of an async generator and a callback: over half of the console's UI
thread under the acceptance soak (issue 40, py-spy). ``Monque.resilient_watch_rows`` hands the
consumer each pull whole instead: one call per pull, one plain tuple per change, as the store
read it. The rows say what a ``ChangeEvent`` without a document says, nothing less.

A row is ``(token, op, job_id, name, status, next_run_at_ms)``:

- ``op``: ``"insert"``, ``"update"``, ``"delete"``, or ``"stop"`` (an update that asks the running
  job to stop, ``ChangeEvent.stop_requested``);
- ``status``: the status the change left the job in, as its string value
  (``JobStatus.value``), or None where the store does not say; a delete keeps the job's last one;
- ``name`` and ``next_run_at_ms`` as the change carried them (None where the store does not say).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from .job import STATUS_BY_VALUE, ChangeEvent, change_event

#: A row: (token, op, job_id, name, status value, next_run_at_ms).
ChangeRow = tuple[Any, str, str, "str | None", "str | None", "int | None"]
ROW_TOKEN: Final = 0
ROW_OP: Final = 1
ROW_JOB_ID: Final = 2
ROW_NAME: Final = 3
ROW_STATUS: Final = 4
ROW_NEXT_RUN: Final = 5
STOP_OP = "stop"


class ChangeRows:
    """The changes of one pull, in commit order, and the token that resumes after them."""

    __slots__ = ("rows", "token")

    def __init__(self, rows: Sequence[ChangeRow], token: Any) -> None:
        self.rows = rows
        #: Resume here to continue after these rows (it may lie past the last row: rows the
        #: store read and skipped still advance it).
        self.token = token

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"ChangeRows({len(self.rows)} rows, token={self.token!r})"

    def events(self) -> list[ChangeEvent]:
        """The same changes as ``ChangeEvent``s (without documents)."""
        statuses = STATUS_BY_VALUE
        return [
            change_event(
                "update" if op == STOP_OP else op,  # type: ignore[arg-type]  # the feed's own operations
                job_id,
                None,
                token,
                name,
                statuses.get(status) if status is not None else None,
                next_run,
                op == STOP_OP,
            )
            for token, op, job_id, name, status, next_run in self.rows
        ]


def event_row(change: ChangeEvent) -> ChangeRow:
    """``change`` as a row (its document, if any, is not kept)."""
    op = STOP_OP if change.stop_requested else change.operation
    status = change.status.value if change.status is not None else None
    return (change.token, op, change.job_id, change.name, status, change.next_run_at_ms)


class EventsAsRows:
    """A store's stream of ``ChangeEvent``s seen as ``ChangeRows``, one change each: for a store
    without a row feed of its own (MongoDB's stream delivers its changes one by one anyway)."""

    def __init__(self, stream: AsyncIterator[ChangeEvent]) -> None:
        self._stream = stream

    def __aiter__(self) -> EventsAsRows:
        return self

    async def __anext__(self) -> ChangeRows:
        change = await self._stream.__anext__()
        return ChangeRows([event_row(change)], change.token)

    @property
    def resume_token(self) -> Any:
        """The wrapped stream's latest position, when it knows one past its last event."""
        return getattr(self._stream, "resume_token", None)

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None) or getattr(self._stream, "close", None)
        if close is not None:
            result = close()
            if hasattr(result, "__await__"):
                await result


__all__ = [
    "ROW_JOB_ID",
    "ROW_NAME",
    "ROW_NEXT_RUN",
    "ROW_OP",
    "ROW_STATUS",
    "ROW_TOKEN",
    "STOP_OP",
    "ChangeRow",
    "ChangeRows",
    "EventsAsRows",
    "event_row",
]
