"""Sample jobs, one per status with the fields only that status carries (shared by the
import contract tests, the export round trips and the CLI's restore test)."""

from __future__ import annotations

from monque_engine import Attempt, Job, JobStatus
from monque_engine.errorgroups import error_group_key
from monque_engine.run_progress import Progress

BASE = 1_768_478_400_000
MINUTE = 60_000


def oid(n: int) -> str:
    return f"678800aa{n:016x}"


def sample_jobs() -> list[Job]:
    """One job per status, each with the fields only that status carries."""
    failure = Attempt(3, "failed", "worker-1:1:a", BASE - 2_000, BASE - 1_000, "httpx.ConnectTimeout", "timed out")
    retrying = Attempt(1, "retrying", "worker-2:2:b", BASE - 9_000, BASE - 8_000, "KeyError", "'sku'", "Traceback …")
    return [
        Job(oid(1), "email", {"to": "ada@example.com"}, JobStatus.PENDING, BASE + 5 * MINUTE, BASE - MINUTE, BASE),
        Job(
            oid(2),
            "resize",
            [1, 2.5, None],
            JobStatus.PROCESSING,
            BASE - MINUTE,
            BASE - 5 * MINUTE,
            BASE,
            locked_at_ms=BASE - 2 * MINUTE,
            claimed_by="web-1:4121:9f3a2c",
            last_heartbeat_ms=BASE - 20_000,
            heartbeat_interval_ms=30_000,
            stop_requested_at_ms=BASE - MINUTE,  # issue 37: a stop on its way, and a progress report
            progress=Progress(0.5, "half way", BASE - 30_000),
        ),
        Job(oid(3), "report", None, JobStatus.COMPLETED, BASE - 9 * MINUTE, BASE - 10 * MINUTE, BASE - 8 * MINUTE),
        Job(
            oid(4),
            "webhook",
            {"url": "https://hooks.example.com"},
            JobStatus.FAILED,
            BASE - 30 * MINUTE,
            BASE - 40 * MINUTE,
            BASE - MINUTE,
            fail_count=3,
            fail_reason="timed out",
            attempts=(failure,),
            error_type="httpx.ConnectTimeout",
            error_group=error_group_key("webhook", "httpx.ConnectTimeout", "timed out"),
        ),
        Job(
            oid(5),
            "sync",
            {"account": 7},
            JobStatus.PENDING,
            BASE + MINUTE,
            BASE - 3 * MINUTE,
            BASE - 2 * MINUTE,
            fail_count=1,
            fail_reason="'sku'",
            repeat_interval="0 0 * * *",
            unique_key="sync-7",
            attempts=(retrying,),
            error_type="KeyError",
            error_group=error_group_key("sync", "KeyError", "'sku'"),
        ),
        Job(oid(6), "email", "text", JobStatus.CANCELLED, BASE - 20 * MINUTE, BASE - 25 * MINUTE, BASE - 15 * MINUTE),
    ]
