"""Engine objects → the DTOs' plain dicts (upstream's ``src/mappers``), and the reverse for
selections. Instants are written as JavaScript's ``toISOString`` writes them."""

from __future__ import annotations

from typing import Any

from ..attempts import Attempt
from ..errorgroups import ErrorGroup
from ..job import InstanceInfo, Job, QueueStats, QueueViewSummary
from ..timeutil import datetime_to_ms, ms_to_datetime


def iso(ms: int) -> str:
    """``2026-01-31T09:30:00.000Z`` (milliseconds, UTC, ``Z``)."""
    return ms_to_datetime(ms).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_or_none(ms: int | None) -> str | None:
    return None if ms is None else iso(ms)


def job_dto(job: Job) -> dict[str, Any]:
    dto: dict[str, Any] = {
        "id": job.id,
        "name": job.name,
        "status": str(job.status),
        "payload": job.data,
        "nextRunAt": iso(job.next_run_at_ms),
        "lockedAt": iso_or_none(job.locked_at_ms),
        "claimedBy": job.claimed_by,
        "lastHeartbeat": iso_or_none(job.last_heartbeat_ms),
        "failCount": job.fail_count,
        "failureReason": job.fail_reason,
        "createdAt": iso(job.created_at_ms),
        "updatedAt": iso(job.updated_at_ms),
    }
    if job.heartbeat_interval_ms is not None:
        dto["heartbeatInterval"] = job.heartbeat_interval_ms
    if job.repeat_interval is not None:
        dto["repeatInterval"] = job.repeat_interval
    if job.unique_key is not None:
        dto["uniqueKey"] = job.unique_key
    return dto


def stats_dto(stats: QueueStats) -> dict[str, Any]:
    dto: dict[str, Any] = {
        "pending": stats.pending,
        "processing": stats.processing,
        "completed": stats.completed,
        "failed": stats.failed,
        "cancelled": stats.cancelled,
        "total": stats.total,
    }
    if stats.avg_processing_duration_ms is not None:
        dto["avgProcessingDurationMs"] = stats.avg_processing_duration_ms
    return dto


def queue_view_dto(view: QueueViewSummary) -> dict[str, Any]:
    worker = view.worker
    return {
        "name": view.name,
        "hasPersistedJobs": view.has_persisted_jobs,
        "hasRegisteredWorker": view.has_registered_worker,
        "stats": stats_dto(view.stats),
        "worker": None if worker is None else {"concurrency": worker.concurrency, "activeCount": worker.active_count},
    }


def error_group_dto(group: ErrorGroup) -> dict[str, Any]:
    return {
        "key": group.key,
        "name": group.name,
        "errorType": group.error_type,
        "pattern": group.pattern,
        "sampleMessage": group.sample_message,
        "count": group.count,
        "retrying": group.retrying,
        "failed": group.failed,
        "firstSeen": iso(group.first_seen_ms),
        "lastSeen": iso(group.last_seen_ms),
        "perMinute": list(group.per_minute),
    }


def attempt_dto(attempt: Attempt) -> dict[str, Any]:
    return {
        "attempt": attempt.number,
        "outcome": attempt.outcome,
        "instanceId": attempt.instance_id,
        "startedAt": iso_or_none(attempt.started_at_ms),
        "endedAt": iso(attempt.ended_at_ms),
        "durationMs": attempt.duration_ms,
        "errorType": attempt.error_type,
        "errorMessage": attempt.error_message,
        "traceback": attempt.traceback,
    }


def instance_dto(info: InstanceInfo) -> dict[str, Any]:
    def instant(value: Any) -> str | None:
        return None if value is None else iso(datetime_to_ms(value))

    return {
        "id": info.id,
        "inferred": info.inferred,
        "alive": info.alive,
        "jobsHeld": info.jobs_held,
        "lastHeartbeat": instant(info.last_heartbeat),
        "heartbeatIntervalMs": round(info.heartbeat_interval * 1000),
        "host": info.host,
        "pid": info.pid,
        "version": info.version,
        "startedAt": instant(info.started_at),
        "workers": dict(info.workers),
        "running": info.running,
        "processed": info.processed,
        "failed": info.failed,
    }


def job_run_dto(job: Job) -> dict[str, Any]:
    """The running attempt's state. Progress, a stop request and a passed limit are given
    only when they speak for this attempt (written since its claim), so a retried job never
    shows the last run's 90 % or its stop."""
    progress = job.running_progress
    return {
        "jobId": job.id,
        "status": job.status.value,
        "claimedBy": job.claimed_by,
        "lockedAt": iso_or_none(job.locked_at_ms),
        "lastHeartbeat": iso_or_none(job.last_heartbeat_ms),
        "timeoutMs": job.timeout_ms,
        "overLimitAt": iso_or_none(job.over_limit_at_ms) if job.over_limit else None,
        "stopRequestedAt": iso_or_none(job.stop_requested_at_ms) if job.stop_pending else None,
        "progress": None if progress is None else progress.as_mapping(iso),
    }
