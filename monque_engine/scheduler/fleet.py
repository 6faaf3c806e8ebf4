"""Fleet and queue control (issue 13): the instance registry, dead-owner release, pause and
resume per job name, and queue health from per-minute outcome counters.

Why a service of its own: none of this is on the hot path. The processor only keeps an
in-memory paused set (refreshed here every ``poll_interval``) and adds to in-memory
counters; everything that touches the store happens on the heartbeat tick, at start and
stop, or when an operator asks.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..errorgroups import is_error_counter
from ..errors import InvalidJobQueryError
from ..store import ports
from ..timeutil import ms_to_datetime, now_ms
from ..validation import validate_job_name
from ..version import __version__
from .context import SchedulerContext
from .liveness import OwnerWatcher
from .processor import JobProcessor
from .stop_budget import StopBudget

if TYPE_CHECKING:
    from ..fleet_records import InstanceInfo, InstanceRecord, OwnerCheck, QueueHealth

log = logging.getLogger("monque_engine.fleet")

#: Registry records whose heartbeat stopped this long ago are deleted (a dead instance stays
#: visible, marked dead, for a day: long enough for an operator to notice it in the morning).
INSTANCE_RETENTION_MS = 24 * 60 * 60 * 1000
#: Per-minute counters are kept this long (the brief asks for at least 24 h).
COUNTER_RETENTION_MINUTES = 48 * 60
#: Purges run at most this often per process (they are cheap, but there is no need).
PURGE_EVERY_MS = 10 * 60 * 1000
MINUTE_MS = 60_000
#: Counter batches whose write failed, kept to be sent again (see ``flush_counts``): beyond
#: this many (a store refusing every counter write for hours) the oldest are dropped.
MAX_UNSETTLED_COUNTER_BATCHES = 1_000

#: Set by the supervisor that started this process (``monque-tui --worker --processes N``; any
#: process manager may set it): recorded on the registry record as ``supervisor``.
SUPERVISOR_ENV = "MONQUE_SUPERVISOR_ID"

Counts = dict[tuple[str, int], tuple[int, int]]
MAX_HEALTH_WINDOW_MINUTES = COUNTER_RETENTION_MINUTES


def _version() -> str:
    return f"monque_engine {__version__}"


def _dt(ms: int | None) -> datetime | None:
    return None if ms is None else ms_to_datetime(ms)


class Fleet:
    def __init__(self, ctx: SchedulerContext, processor: JobProcessor, store: ports.Fleet) -> None:
        self._ctx = ctx
        self._store = store
        self._processor = processor
        self._host = socket.gethostname()
        self._pid = os.getpid()
        self._supervisor = os.environ.get(SUPERVISOR_ENV) or None
        self._started_at_ms: int | None = None
        self._registered = False
        self._next_purge_ms = 0
        #: The last counter write (see flush_counts): a later flush waits for it first.
        self._flushing: asyncio.Future[None] | None = None
        #: (batch id, counts) whose write failed, oldest first: sent again with the same id.
        self._unsettled: list[tuple[str, Counts]] = []
        options = ctx.options
        self._owners = OwnerWatcher(lambda: store, options.heartbeat_interval, options.lock_timeout)

    @property
    def _heartbeat_ms(self) -> int:
        return int(self._ctx.options.heartbeat_interval * 1000)

    # -- this instance's record, counters and paused set ------------------------------------------
    def record(self, now: int) -> InstanceRecord:
        from ..fleet_records import InstanceRecord  # here, as below: no launch creates them (issue 40)

        processor = self._processor
        if self._started_at_ms is None:
            self._started_at_ms = now
        return InstanceRecord(
            id=self._ctx.instance_id,
            host=self._host,
            pid=self._pid,
            version=_version(),
            started_at_ms=self._started_at_ms,
            heartbeat_interval_ms=self._heartbeat_ms,
            workers={name: worker.concurrency for name, worker in sorted(processor.workers.items())},
            running=len(processor.active_jobs),
            processed=processor.processed,
            failed=processor.failed,
            last_heartbeat_ms=now,
            supervisor=self._supervisor,
        )

    async def join(self) -> None:
        """At start: register, and load the paused set before the first claim."""
        self._started_at_ms = now_ms()
        await self._guarded(self.refresh_paused)
        await self._guarded(self.beat)

    async def beat(self) -> None:
        """The heartbeat tick: refresh the record, flush counters, apply retention now and then."""
        store = self._store
        now = now_ms()
        await store.upsert_instance(self.record(now))
        self._registered = True
        await self.flush_counts()
        if now >= self._next_purge_ms:
            self._next_purge_ms = now + PURGE_EVERY_MS
            await store.purge_instances(now - INSTANCE_RETENTION_MS)
            await store.purge_outcome_counts(now // MINUTE_MS - COUNTER_RETENTION_MINUTES)

    async def beat_guarded(self) -> None:
        await self._guarded(self.beat)

    async def flush_counts(self, after_pending: bool = True) -> None:
        """Add this process's outcome tally to the store's per-minute counters.

        Each flush is a batch with an id of its own (``add_outcome_counts(counts, batch=…)``).
        A write that fails may still have been applied: MongoDB can apply a retried write
        and lose the reply to a network error (issue 36 defect 8). So a failed batch is
        never put back into the tally to be added under a new id, as before (it counted
        twice); it is kept with its id and sent again, first, by the next flush, and a
        store that was already given that id leaves it out. A store that says which part
        of a batch it did not apply (``error.unapplied``, MongoDB's unordered bulk write)
        gets only that part again.

        The write runs shielded: a caller cancelled mid-write (the heartbeat tick, by stop())
        does not know whether it committed (SQLite's write thread goes on regardless), and
        the next flush (``leave()``'s) waits for it first. ``after_pending=False``: do not
        wait (``leave()`` gave up waiting; counter increments add up in any order).
        """
        pending = self._flushing
        if after_pending and pending is not None and not pending.done():
            await asyncio.wait([pending])
        batches, self._unsettled = self._unsettled, []
        counts = self._processor.take_tally()
        if counts:
            batches.append((os.urandom(8).hex(), counts))  # secrets.token_hex(8), without importing secrets
        if not batches:
            return
        write = asyncio.ensure_future(self._write_batches(batches))
        self._flushing = write
        await asyncio.shield(write)

    async def _write_batches(self, batches: list[tuple[str, Counts]]) -> None:
        """Each batch in order; at the first failure, that batch (or the part the store
        names) and the ones after it are kept for the next flush, with their ids."""
        for position, (batch, counts) in enumerate(batches):
            try:
                await self._store.add_outcome_counts(counts, batch=batch)
            except BaseException as error:
                unapplied: Counts = getattr(error, "unapplied", counts)
                keep = ([(batch, unapplied)] if unapplied else []) + batches[position + 1 :]
                self._unsettled = (keep + self._unsettled)[-MAX_UNSETTLED_COUNTER_BATCHES:]
                raise

    async def leave(self, budget: StopBudget | None = None, *, holding: bool = False) -> None:
        """On a stop: flush the counters and remove the record. Never raises.

        ``holding``: the stop left jobs processing under this instance (its shutdown timed
        out). The record then stays, as a crash leaves it: a console shows this instance
        with the jobs it holds, dead after two heartbeat intervals and releasable then. Removed,
        its held jobs had no registered owner and read as a Node worker's, alive while their
        last heartbeats were fresh (a console probe).

        Each of its three store steps is bounded by ``budget`` (stop_budget.py): with the
        store unreachable, stop() used to wait here without limit for an in-flight counter
        write, then for two more writes (issue 27 item 15). A counter write given up on is
        left running, never cancelled: whether it was applied is unknown, so its counts
        must not be written again (they would count twice); at worst they are lost."""
        budget = budget if budget is not None else StopBudget()
        pending = self._flushing
        waited = True
        if pending is not None and not pending.done():
            waited, _ = await budget.run(
                "waiting for the last counter write",
                asyncio.wait([pending]),
                "its counts may be missing from the per-minute counters",
            )
        await self._guarded(
            lambda: budget.run(
                "flushing the counters",
                self.flush_counts(after_pending=waited),
                "the outcome counts of the last heartbeat interval may be missing",
            )
        )
        if self._registered and not holding:
            self._registered = False
            await self._guarded(
                lambda: budget.run(
                    "removing this instance's registry record",
                    self._store.remove_instance(self._ctx.instance_id),
                    "the record stays, shown dead after two heartbeat intervals and deleted by retention",
                )
            )

    async def refresh_paused(self) -> None:
        paused = await self._store.paused_names()
        self._apply_paused(frozenset(paused))

    def _apply_paused(self, paused: frozenset[str]) -> None:
        from ..event_payloads import QueueControlEvent

        before = self._processor.paused
        if paused == before:
            return
        self._processor.set_paused(paused)
        events = self._ctx.events
        for name in sorted(paused - before):
            events.emit("queue:paused", QueueControlEvent(name))
        for name in sorted(before - paused):
            events.emit("queue:resumed", QueueControlEvent(name))

    async def _guarded(self, duty: object) -> None:
        from ..event_payloads import JobErrorEvent

        try:
            await duty()  # type: ignore[operator]
        except Exception as error:  # noqa: BLE001 - fleet bookkeeping must never stop processing
            self._ctx.events.emit("job:error", JobErrorEvent(error))

    # -- operator API ----------------------------------------------------------------------------
    async def pause(self, name: str) -> bool:
        validate_job_name(name)
        changed = await self._store.set_paused(name, True, now_ms())
        if self._processor.running:
            self._apply_paused(self._processor.paused | {name})
        return changed

    async def resume(self, name: str) -> bool:
        validate_job_name(name)
        changed = await self._store.set_paused(name, False, now_ms())
        if self._processor.running:
            self._apply_paused(self._processor.paused - {name})
        return changed

    async def paused(self) -> dict[str, datetime]:
        return {name: ms_to_datetime(ms) for name, ms in (await self._store.paused_names()).items()}

    async def instances(self) -> list[InstanceInfo]:
        from ..fleet_records import InstanceInfo

        store = self._store
        records = await store.list_instances()
        holdings = {holding.owner: holding for holding in await store.owner_holdings()}
        now = now_ms()
        default_ms = self._heartbeat_ms
        result: list[InstanceInfo] = []
        for record in records:
            held = holdings.pop(record.id, None)
            interval = record.heartbeat_interval_ms or default_ms
            result.append(
                InstanceInfo(
                    id=record.id,
                    inferred=False,
                    alive=now - record.last_heartbeat_ms <= 2 * interval,
                    jobs_held=held.jobs if held else 0,
                    last_heartbeat=_dt(record.last_heartbeat_ms),
                    heartbeat_interval=interval / 1000,
                    host=record.host,
                    pid=record.pid,
                    version=record.version,
                    started_at=_dt(record.started_at_ms),
                    workers=dict(record.workers),
                    running=record.running,
                    processed=record.processed,
                    failed=record.failed,
                    supervisor=record.supervisor,
                    longest_job_id=held.longest_job_id if held else None,
                    longest_since=_dt(held.longest_since_ms) if held else None,
                )
            )
        for owner, held in holdings.items():
            interval = held.heartbeat_interval_ms or default_ms
            beat = held.last_heartbeat_ms
            result.append(
                InstanceInfo(
                    id=owner,
                    inferred=True,
                    alive=beat is not None and now - beat <= 2 * interval,
                    jobs_held=held.jobs,
                    last_heartbeat=_dt(beat),
                    heartbeat_interval=interval / 1000,
                    longest_job_id=held.longest_job_id,
                    longest_since=_dt(held.longest_since_ms),
                )
            )
        result.sort(key=lambda info: (info.inferred, info.id))
        return result

    def _owner(self, instance_id: str) -> str:
        if not isinstance(instance_id, str) or not instance_id:
            raise InvalidJobQueryError(
                f"instance_id must be a non-empty string (an id from monque.instances()), got {instance_id!r}"
            )
        if not instance_id.isascii():
            try:
                instance_id.encode()
            except UnicodeEncodeError:  # a lone surrogate: no stored owner has one, and sqlite3 cannot bind it
                raise InvalidJobQueryError(
                    f"instance_id {instance_id!r} is not valid Unicode text (unpaired surrogate); use an id "
                    "from monque.instances()"
                ) from None
        return instance_id

    async def check_owner(self, instance_id: str) -> OwnerCheck:
        return await self._owners.check(self._owner(instance_id))

    async def watch_owner(self, instance_id: str) -> float:
        return await self._owners.look(self._owner(instance_id))

    async def count_dead_owner_jobs(self, instance_id: str) -> int:
        return (await self.check_owner(instance_id)).releasable

    async def release_dead_owner_jobs(self, instance_id: str) -> int:
        from ..event_payloads import CountEvent

        owner = self._owner(instance_id)
        count = await self._owners.release(owner, now_ms())
        if count > 0:
            self._ctx.events.emit("stale:recovered", CountEvent(count))
            self._processor.wake()
        return count

    async def queue_health(self, window_minutes: int = 60) -> list[QueueHealth]:
        from ..fleet_records import MinuteCount, QueueHealth

        if (
            not isinstance(window_minutes, int)
            or isinstance(window_minutes, bool)
            or not 1 <= window_minutes <= MAX_HEALTH_WINDOW_MINUTES
        ):
            raise InvalidJobQueryError(
                f"window_minutes must be an integer from 1 to {MAX_HEALTH_WINDOW_MINUTES} (the counters' "
                f"retention), got {window_minutes!r}"
            )
        store = self._store
        now = now_ms()
        if self._processor.running:
            await self._guarded(self.flush_counts)  # this process's last minutes count too
        pending = {h.name: h for h in await store.pending_health(now)}
        since = now // MINUTE_MS - window_minutes + 1
        minutes: dict[str, list[MinuteCount]] = {}
        for name, minute, completed, failed in await store.outcome_counts(since):
            if is_error_counter(name):
                continue  # an error group's failed attempts (the errors view's), not a name's
            minutes.setdefault(name, []).append(
                MinuteCount(name, datetime.fromtimestamp(minute * 60, UTC), completed, failed)
            )
        paused = set(await store.paused_names())
        names = sorted(set(pending) | set(minutes) | paused | set(self._processor.workers))
        result = []
        for name in names:
            health = pending.get(name)
            oldest = health.oldest_due_ms if health else None
            result.append(
                QueueHealth(
                    name=name,
                    due=health.due if health else 0,
                    scheduled=health.scheduled if health else 0,
                    processing=health.processing if health else 0,
                    latency=None if oldest is None else max(0, now - oldest) / 1000,
                    paused=name in paused,
                    per_minute=minutes.get(name, []),
                )
            )
        return result
