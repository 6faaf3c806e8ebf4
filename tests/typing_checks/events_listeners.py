"""Checked by mypy (``make lint``), never run: each event's listener must take that event's payload.

The lines marked ``type: ignore[call-overload]`` must stay errors; strict mypy reports an
ignore that is no longer needed, so if ``on``/``once`` stopped matching listeners to payloads
(say, a catch-all overload taking any callable), ``make lint`` would fail here.
"""

from __future__ import annotations

from monque_engine import Monque
from monque_engine.events import CountEvent, EventEmitter, JobCompleteEvent
from monque_engine.job import Job


def on_complete(event: JobCompleteEvent) -> None: ...
def on_count(event: CountEvent) -> None: ...
def on_job(job: Job) -> None: ...


def listeners_that_fit(m: Monque, emitter: EventEmitter) -> None:
    m.on("job:complete", on_complete)
    m.on("jobs:deleted", on_count)
    m.once("job:start", on_job)
    m.on("job:complete", lambda event: print(event.duration))  # the payload type reaches a lambda
    emitter.on("stale:recovered", on_count)
    emitter.once("job:complete", on_complete)


def listeners_that_do_not(m: Monque, emitter: EventEmitter) -> None:
    m.on("job:complete", on_count)  # type: ignore[call-overload]
    m.once("job:start", on_complete)  # type: ignore[call-overload]
    m.on("job:complete", lambda event: event.no_such_field)  # type: ignore[call-overload]
    m.on("job:completed", on_complete)  # type: ignore[call-overload]
    emitter.on("stale:recovered", on_job)  # type: ignore[call-overload]
    emitter.once("queue:paused", on_count)  # type: ignore[call-overload]
