"""The console's fleet side, without Textual: instances, dead-owner release, paused names, health.

Screens ask here and draw the answers. Liveness is judged with the console's clock (the
same rule as the engine's: a heartbeat older than twice its interval is dead), so a
frozen-clock snapshot draws the same every time, and a live console agrees with the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from rich.text import Text

from monque_engine import Job, JobStatus, Monque

from .events import PausedNamesChanged

if TYPE_CHECKING:
    from monque_engine.fleet_records import InstanceInfo, QueueHealth

#: A 24-hour sparkline of outcomes: one bar per hour, so a console opened in the morning shows the night.
HEALTH_WINDOW_MINUTES = 24 * 60
SPARK_BUCKETS = 24
#: The "per minute" rate columns average the last few minutes (one minute alone is noisy).
RATE_MINUTES = 5
SPARKS = " ▁▂▃▄▅▆▇█"


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


class InstanceRow(NamedTuple):
    """One instance as the Workers screen shows it."""

    info: InstanceInfo
    #: Milliseconds since the last heartbeat (None: never beat, an inferred owner without heartbeats).
    age_ms: int | None
    dead: bool
    #: Jobs processed per second between the instance's last two heartbeats (None until two
    #: were seen, and for a dead instance).
    rate: float | None
    #: How long its longest-running job has run (ms since that claim; None: it holds none).
    longest_ms: int | None = None

    @property
    def id(self) -> str:
        return self.info.id


def judge(info: InstanceInfo, now_ms: int) -> tuple[int | None, bool]:
    """Heartbeat age and whether the instance is dead (heartbeat older than twice its interval)."""
    beat = _ms(info.last_heartbeat)
    if beat is None:
        return None, not info.alive
    age = max(0, now_ms - beat)
    return age, age > 2 * info.heartbeat_interval * 1000


class FleetView:
    """Turns each instance's processed count into a rate, between its heartbeats.

    The registry record (and so ``processed``) is rewritten once per heartbeat (30 s by
    default), while the screen reads it every 2 s. Dividing by the console's own sampling
    interval showed ``0.0/s`` for a busy worker between beats and then one sample of 15
    times its real rate (probe 6). The rate is measured from one heartbeat to the next, on
    the heartbeats' own timestamps, and kept until the next beat; a dead instance has none.
    """

    def __init__(self) -> None:
        #: id -> (heartbeat at ms, processed then, rate measured up to that beat or None)
        self._beats: dict[str, tuple[int, int, float | None]] = {}

    def rows(self, infos: Sequence[InstanceInfo], now_ms: int) -> list[InstanceRow]:
        rows: list[InstanceRow] = []
        seen: dict[str, tuple[int, int, float | None]] = {}
        for info in infos:
            age, dead = judge(info, now_ms)
            rate = None
            beat = _ms(info.last_heartbeat)
            if info.processed is not None and beat is not None:
                before = self._beats.get(info.id)
                if before is not None and beat == before[0]:
                    sample = before  # the same heartbeat: the record has not changed since
                elif before is None or beat < before[0] or info.processed < before[1]:
                    sample = (beat, info.processed, None)  # first sight, a restarted counter or clock
                else:
                    sample = (beat, info.processed, (info.processed - before[1]) / ((beat - before[0]) / 1000))
                seen[info.id] = sample
                rate = None if dead else sample[2]
            since = _ms(info.longest_since)
            longest = None if since is None else max(0, now_ms - since)
            rows.append(InstanceRow(info, age, dead, rate, longest))
        self._beats = seen
        return rows


def unregistered_owners_note(rows: Sequence[InstanceRow], shown: int = 3) -> str | None:
    """Owners of processing jobs missing from the instance registry, and the mixed-fleet rule.

    Such an owner is a Node Monque worker (or a Python one too old to register). Node's
    stale recovery runs at every Node start and judges ``lockedAt`` alone, so a rolling deploy
    of Node workers re-queues every Python job running longer than Node's ``lockTimeout``.
    Node records that timeout nowhere, so the console cannot check it: it names the owners
    and says the rule (``monque-tui check`` does the same). None when there is none.
    """
    owners = [row.id for row in rows if row.info.inferred and row.info.jobs_held]
    if not owners:
        return None
    from monque_engine.check import MIXED_FLEET_RULE_SHORT  # here: the check package is no part of the launch

    named = ", ".join(owners[:shown]) + (f" and {len(owners) - shown} more" if len(owners) > shown else "")
    return f"Not registered (Node workers?): {named}. {MIXED_FLEET_RULE_SHORT}."


def owner_is_dead(job: Job, now_ms: int) -> bool:
    """A processing job whose owner's heartbeat (on the job) is older than twice its interval.

    By this console's clock, so for display (and for offering ``x``) only: the release itself
    decides by watching the owner's heartbeat move (``Monque.check_owner``)."""
    if job.status is not JobStatus.PROCESSING or not job.claimed_by:
        return False
    beat = job.last_heartbeat_ms if job.last_heartbeat_ms is not None else job.locked_at_ms
    interval = job.heartbeat_interval_ms
    if beat is None or interval is None:
        return False
    return now_ms - beat > 2 * interval


async def release_owner(monque: Monque, instance_id: str) -> str:
    """Release a dead owner's jobs now; the sentence for the operator.

    Alive or dead is the engine's watch (``check_owner``: its heartbeat moving or not), never
    this console's clock; after the count that asked, the watch goes on where it stopped, so
    this waits only if the owner wrote something since.
    """
    check = await monque.check_owner(instance_id)
    if check.alive:
        return f"Released nothing: owner {instance_id} is alive (its heartbeat moved while watched)."
    released = await monque.release_dead_owner_jobs(instance_id)
    if released:
        return f"Released {released:,} job{'s' if released != 1 else ''} of {instance_id}: pending again."
    if check.releasable:
        return f"Released nothing: {instance_id} wrote again, or its jobs left processing, just before the write."
    return f"Released nothing: owner {instance_id} holds no processing jobs now."


def sparkline(
    health: QueueHealth, now_ms: int, buckets: int = SPARK_BUCKETS, minutes: int = HEALTH_WINDOW_MINUTES
) -> tuple[str, str]:
    """Completed and failed over the window, one character per bucket (oldest left)."""
    size = minutes // buckets
    start_minute = now_ms // 60_000 - minutes + 1
    completed = [0] * buckets
    failed = [0] * buckets
    for count in health.per_minute:
        index = (int(count.minute.timestamp()) // 60 - start_minute) // size
        if 0 <= index < buckets:
            completed[index] += count.completed
            failed[index] += count.failed
    return _spark(completed), _spark(failed)


def _spark(values: list[int]) -> str:
    top = max(values, default=0)
    if top == 0:
        return "·" * len(values)
    return "".join(SPARKS[0] if v == 0 else SPARKS[max(1, round(v / top * (len(SPARKS) - 1)))] for v in values)


def recent_rate(health: QueueHealth, now_ms: int, minutes: int = RATE_MINUTES) -> tuple[float, float]:
    """Completed and failed per minute over the last ``minutes`` minutes, the current one included.

    Divided by the time those minutes cover so far (the current minute only up to now): over
    ``minutes`` whole minutes, a queue doing a steady 1,000 a minute read 800-1,000 depending
    on the second it was looked at.
    """
    since = now_ms // 60_000 - minutes + 1
    recent = [c for c in health.per_minute if int(c.minute.timestamp()) // 60 >= since]
    covered = minutes - 1 + max(now_ms % 60_000, 1_000) / 60_000  # the current minute counts at least 1 s
    return sum(c.completed for c in recent) / covered, sum(c.failed for c in recent) / covered


def spark_cells(health: QueueHealth, now_ms: int) -> Text:
    """The 24-hour sparkline of completed jobs, green; hours that had failures are drawn red."""
    completed, failed = sparkline(health, now_ms)
    text = Text()
    for ok_char, fail_char in zip(completed, failed, strict=True):
        if fail_char not in ("·", " "):
            text.append(fail_char if ok_char in ("·", " ") else ok_char, style="red")
        else:
            text.append(ok_char, style="dim" if ok_char == "·" else "green")
    return text


__all__ = [
    "FleetView",
    "InstanceRow",
    "PausedNamesChanged",
    "owner_is_dead",
    "recent_rate",
    "release_owner",
    "spark_cells",
    "sparkline",
]
