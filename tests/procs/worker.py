"""A worker process: ``python -m tests.procs.worker --db PATH --instance ID --runs-dir DIR ...``

Registers one handler for ``--name`` that records ``start <id>`` in its run log, sleeps
``--delay`` seconds (cancellable, as asyncio sleeps are) and records ``done <id>``. Prints
``ready`` once the processor runs and the change feed is connected, engine events as they
happen, and ``stopping`` / ``stopped`` / ``exit`` around a graceful stop. SIGTERM and SIGINT
are handled with ``loop.add_signal_handler`` and lead to ``await monque.stop()``; the
process then exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
from typing import Any

from monque_engine import Monque

from ._common import RunLog, emit, sqlite_url


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--db", required=True)
    p.add_argument("--instance", required=True)
    p.add_argument("--runs-dir", required=True)
    p.add_argument("--name", default="task")
    p.add_argument("--concurrency", type=int, default=5)
    p.add_argument("--delay", type=float, default=0.0, help="seconds each handler sleeps")
    p.add_argument("--lock-timeout", type=float, default=1800.0)
    p.add_argument("--stale-recovery-interval", type=float, default=None)
    p.add_argument("--poll-interval", type=float, default=1.0)
    p.add_argument("--safety-poll-interval", type=float, default=30.0)
    p.add_argument("--heartbeat-interval", type=float, default=30.0)
    p.add_argument("--shutdown-timeout", type=float, default=30.0)
    p.add_argument("--print-jobs", action="store_true", help="print job:start and job:complete lines")
    p.add_argument(
        "--mixed-delay",
        type=float,
        default=0.0,
        help="instead of --delay: each job sleeps 0, 1/10, 1/3 or all of this, chosen by its id",
    )
    p.add_argument("--fail-marked", action="store_true", help="the handler raises for jobs whose data has fail=true")
    p.add_argument("--max-retries", type=int, default=None)
    p.add_argument("--base-retry-interval", type=float, default=None)
    p.add_argument("--url-query", default="", help="appended to the SQLite URL, e.g. busy_timeout=0.5")
    p.add_argument("--also", action="append", default=[], help="another job name run by the same handler")
    p.add_argument("--timeout", type=float, default=None, help="register the handler with this time limit")
    p.add_argument(
        "--hang",
        choices=("async", "sync", "sync-poll"),
        default=None,
        help="each job's first run hangs: async awaits an event that never comes; sync (a plain def, run in "
        "a thread) blocks until a line 'release' arrives on stdin; sync-poll (every run) polls "
        "job.should_stop() until it is true",
    )
    p.add_argument("--hang-every", action="store_true", help="with --hang async: every run hangs, not just the first")
    p.add_argument("--progress", type=float, default=None, help="with --hang async: report this progress first")
    return p.parse_args(argv)


def job_ids(jobs: Any) -> list[str]:
    return [getattr(job, "id", str(job)) for job in (jobs or [])]


async def run(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()

    def on_signal(signum: int) -> None:
        emit("signal", signal=signal.Signals(signum).name)
        stop_requested.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)

    options: dict[str, Any] = {
        "scheduler_instance_id": args.instance,
        "lock_timeout": args.lock_timeout,
        "poll_interval": args.poll_interval,
        "safety_poll_interval": args.safety_poll_interval,
        "heartbeat_interval": args.heartbeat_interval,
        "shutdown_timeout": args.shutdown_timeout,
    }
    if args.stale_recovery_interval is not None:
        options["stale_recovery_interval"] = args.stale_recovery_interval
    if args.max_retries is not None:
        options["max_retries"] = args.max_retries
    if args.base_retry_interval is not None:
        options["base_retry_interval"] = args.base_retry_interval
    url = sqlite_url(args.db) + (f"?{args.url_query}" if args.url_query else "")
    monque = Monque(url, **options)
    runs = RunLog(args.runs_dir, args.instance)

    def delay_of(job: Any) -> float:
        if args.mixed_delay > 0:
            return args.mixed_delay * (0.0, 0.1, 1 / 3, 1.0)[int(job.id[-2:], 16) % 4]
        return args.delay

    async def handler(job: Any) -> None:
        runs.record("start", job.id)
        try:
            delay = delay_of(job)
            if delay > 0:
                await asyncio.sleep(delay)
        except asyncio.CancelledError:
            runs.record("cancelled", job.id)
            raise
        if args.fail_marked and isinstance(job.data, dict) and job.data.get("fail"):
            runs.record("failed", job.id)
            raise RuntimeError(f"job {job.id} is marked to fail")
        runs.record("done", job.id)

    started: set[str] = set()
    never = asyncio.Event()
    released = threading.Event()

    async def hang_async(job: Any) -> None:
        runs.record("start", job.id)
        if args.progress is not None:
            await job.report_progress(args.progress, "halfway")
            emit("progress", job_id=job.id)
        if job.id not in started or args.hang_every:
            started.add(job.id)
            emit("hanging", job_id=job.id, locked_at=job.locked_at_ms)
            try:
                await never.wait()
            except asyncio.CancelledError:
                runs.record("cancelled", job.id)
                raise
        runs.record("done", job.id)

    def hang_sync(job: Any) -> None:
        runs.record("start", job.id)
        if job.id not in started:
            started.add(job.id)
            emit("hanging", job_id=job.id)
            released.wait()
            runs.record("released", job.id)
            return
        runs.record("done", job.id)

    def poll_sync(job: Any) -> None:
        """Sync code that stops itself when asked: polls ``job.should_stop()``."""
        runs.record("start", job.id)
        emit("hanging", job_id=job.id, locked_at=job.locked_at_ms)
        while not job.should_stop():
            released.wait(0.01)
        runs.record("stopped", job.id)

    def read_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "release":
                released.set()

    if args.hang == "sync":
        threading.Thread(target=read_stdin, name="stdin", daemon=True).start()
    chosen = {"async": hang_async, "sync": hang_sync, "sync-poll": poll_sync}.get(args.hang or "", handler)
    monque.register(args.name, chosen, concurrency=args.concurrency, timeout=args.timeout)
    for extra in args.also:
        monque.register(extra, chosen, concurrency=args.concurrency, timeout=args.timeout)

    connected = asyncio.Event()
    monque.on("changestream:connected", lambda _e: (connected.set(), emit("changestream:connected")))
    for name in ("changestream:error", "changestream:closed", "changestream:fallback"):
        monque.on(name, lambda e, _n=name: emit(_n, error=repr(getattr(e, "error", None))))
    monque.on("stale:recovered", lambda e: emit("stale:recovered", count=e.count))
    monque.on("queue:paused", lambda e: emit("queue:paused", name=e.name))
    monque.on("queue:resumed", lambda e: emit("queue:resumed", name=e.name))
    monque.on(
        "job:error",
        lambda e: emit(
            "job:error",
            error_type=type(e.error).__name__,
            message=str(e.error),
            job_id=getattr(e.job, "id", None),
            incomplete=job_ids(getattr(e.error, "incomplete_jobs", None)),
        ),
    )
    monque.on("job:fail", lambda e: emit("job:fail", job_id=e.job.id, error=str(e.error), will_retry=e.will_retry))
    if args.print_jobs:
        monque.on("job:start", lambda job: emit("job:start", job_id=job.id))
        monque.on("job:complete", lambda e: emit("job:complete", job_id=e.job.id, status=e.job.status.value))
        monque.on("job:cancelled", lambda e: emit("job:cancelled", job_id=e.job.id, status=e.job.status.value))

    try:
        await monque.initialize()
    except Exception as error:  # noqa: BLE001 - reported to the test, which decides
        emit("init_error", error_type=type(error).__name__, message=str(error))
        runs.close()
        return 3
    await monque.start()
    try:
        await asyncio.wait_for(connected.wait(), 15)
    except TimeoutError:
        emit("fatal", message="change feed did not connect within 15 s")
        await monque.close()
        return 3
    emit("ready", instance=args.instance)

    await stop_requested.wait()
    emit("stopping")
    await monque.stop()
    emit("stopped")
    await monque.close()
    runs.close()
    emit("exit")
    return 0


def main() -> None:
    args = parse_args()
    code = asyncio.run(run(args))
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
