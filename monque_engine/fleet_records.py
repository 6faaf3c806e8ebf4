"""The fleet's and the queues' value types (issue 13): instance records, owners, health.

Apart from ``job``: a console or a producer that starts reads none of them before its first
rows or its first job, and creating their nine dataclasses cost ~5 ms of every launch
(issue 40). ``monque_engine.job`` still names them (loaded on first use there), and so does
``monque_engine``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class InstanceRecord:
    """What a running ``Monque`` writes about itself in the store's instance registry.

    Kept in its own table / collection (``<collection>_instances``), never in job documents,
    so Node Monque and old readers never see it. Instants are epoch ms.
    """

    id: str
    host: str
    pid: int
    version: str
    started_at_ms: int
    heartbeat_interval_ms: int
    #: Job name -> concurrency of every handler this instance registered.
    workers: dict[str, int]
    running: int
    #: Outcomes this instance wrote since it started: completions plus failed attempts.
    processed: int
    #: Failed attempts among ``processed`` (a retry later counts again).
    failed: int
    last_heartbeat_ms: int
    #: The supervisor that started this process (``monque-tui --worker --processes N``, or any
    #: process manager that sets ``MONQUE_SUPERVISOR_ID``), so a console can group its children.
    #: Ours alone: Node Monque neither writes nor reads the registry (ADR 0019).
    supervisor: str | None = None


@dataclass(frozen=True, slots=True)
class OwnerHolding:
    """Processing jobs grouped by ``claimedBy``: how a store sees owners that never register."""

    owner: str
    jobs: int
    #: The freshest liveness instant among its jobs (``lastHeartbeat``, else ``lockedAt``).
    last_heartbeat_ms: int | None
    #: The largest ``heartbeatInterval`` its jobs carry (ms), None when none does.
    heartbeat_interval_ms: int | None
    #: Its longest-running job (the earliest ``lockedAt``) and that claim's instant (issue 37).
    longest_job_id: str | None = None
    longest_since_ms: int | None = None


@dataclass(frozen=True, slots=True)
class OwnerJobStamp:
    """One processing job's claim stamps, as its owner wrote them (epoch ms, None when absent)."""

    id: str
    last_heartbeat_ms: int | None
    locked_at_ms: int | None
    heartbeat_interval_ms: int | None


@dataclass(frozen=True, slots=True)
class OwnerRecords:
    """Everything of one owner that its heartbeat rewrites: its registry record (None when it
    has none) and the stamps of the processing jobs it holds, ordered by id.

    Dead-owner release judges an owner by whether these *move* while it watches them, never
    by comparing their instants with its own clock (ADR 0007): they were written on the
    owner's clock, which may differ from the caller's by any amount.
    """

    owner: str
    record: InstanceRecord | None
    jobs: tuple[OwnerJobStamp, ...]

    @property
    def interval_ms(self) -> int | None:
        """The owner's own heartbeat interval: the largest its record or any of its jobs carries."""
        known = [job.heartbeat_interval_ms for job in self.jobs if job.heartbeat_interval_ms is not None]
        if self.record is not None:
            known.append(self.record.heartbeat_interval_ms)
        positive = [ms for ms in known if ms > 0]
        return max(positive) if positive else None

    def moved_since(self, earlier: OwnerRecords) -> bool:
        """True when the owner wrote something since ``earlier``: its record appeared or changed
        (a beat rewrites ``last_heartbeat``), a job it still holds has other stamps (a beat, or a
        new claim of it), or it holds a job it did not hold then (a claim).

        A job it no longer holds, or a record that disappeared, is not a sign of life by
        itself: an operator, stale recovery or the registry's retention can remove those too.
        """
        if self.record is not None and self.record != earlier.record:
            return True
        before = {job.id: job for job in earlier.jobs}
        return any(before.get(job.id) != job for job in self.jobs)


@dataclass(frozen=True, slots=True)
class OwnerCheck:
    """What ``Monque.check_owner()`` found by watching one owner's records (ADR 0007).

    ``alive``: its heartbeat moved (its registry record or its jobs' stamps changed) while it
    was watched. Otherwise it wrote nothing for ``watched`` seconds, at least twice its own
    heartbeat interval (plus a margin), and is dead: ``releasable`` of its processing jobs go
    back to pending on ``release_dead_owner_jobs()``. No wall clock takes part, so a clock
    that is wrong or stepped, here or on the owner's machine, does not change the answer.
    """

    instance_id: str
    alive: bool
    #: Processing jobs ``release_dead_owner_jobs`` would release now (0 when alive).
    releasable: int
    #: Seconds (monotonic) over which its records were watched.
    watched: float


@dataclass(frozen=True, slots=True)
class InstanceInfo:
    """One scheduler instance as ``Monque.instances()`` reports it.

    ``inferred`` instances did not register (Node Monque workers, or Python ones older than
    the registry): they are known only from the processing jobs they hold, so host, pid,
    version, start time and counts are unknown (None). ``alive`` is False once the last
    heartbeat is older than twice the heartbeat interval (ADR 0004).
    """

    id: str
    inferred: bool
    alive: bool
    #: Processing jobs currently claimed by this instance.
    jobs_held: int
    last_heartbeat: datetime | None
    heartbeat_interval: float  # seconds
    host: str | None = None
    pid: int | None = None
    version: str | None = None
    started_at: datetime | None = None
    workers: dict[str, int] = field(default_factory=dict)
    running: int | None = None
    processed: int | None = None
    failed: int | None = None
    #: The supervisor whose child this instance is (``InstanceRecord.supervisor``), or None.
    supervisor: str | None = None
    #: Its longest-running job (the earliest claim among the jobs it holds) and since when
    #: (issue 37: the Workers view's "what is stuck?"); None when it holds none.
    longest_job_id: str | None = None
    longest_since: datetime | None = None

    def heartbeat_age(self, now: datetime) -> float | None:
        """Seconds since the last heartbeat, None when there never was one."""
        return None if self.last_heartbeat is None else (now - self.last_heartbeat).total_seconds()


@dataclass(frozen=True, slots=True)
class PendingHealth:
    """Per name, what the store says about pending jobs at one instant (ms)."""

    name: str
    due: int
    scheduled: int
    oldest_due_ms: int | None
    processing: int = 0


@dataclass(frozen=True, slots=True)
class MinuteCount:
    """Outcomes of one job name in one UTC minute, from the store's per-minute counters."""

    name: str
    minute: datetime  # the minute's start, UTC
    completed: int
    failed: int


@dataclass(frozen=True, slots=True)
class QueueHealth:
    """Queue health of one job name (``Monque.queue_health()``).

    ``due`` pending jobs are runnable now, ``scheduled`` ones later; ``latency`` is the age
    of the oldest due job (how far behind the workers are), None when nothing is due.
    ``per_minute`` lists the minutes of the window that had outcomes, oldest first; counters
    are written by Python workers only (Node Monque does not keep them).
    """

    name: str
    due: int
    scheduled: int
    processing: int
    latency: float | None  # seconds
    paused: bool
    per_minute: list[MinuteCount]

    @property
    def completed_last_window(self) -> int:
        return sum(m.completed for m in self.per_minute)

    @property
    def failed_last_window(self) -> int:
        return sum(m.failed for m in self.per_minute)
