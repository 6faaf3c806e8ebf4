"""``monque-tui --worker`` as a real process: processing, signals, exit codes, logs."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import CliProcess, enqueue, get_job, jobs

APP = "apps.worker_app:setup"


def start_worker(
    spawn: Callable[..., CliProcess], url: str, *extra: str, app: str = APP, env: dict[str, str] | None = None
) -> CliProcess:
    worker = spawn("--worker", "--app", app, "--log-format", "json", "--log-level", "debug", *extra, url, env=env)
    worker.wait_for_event("worker:started")
    return worker


def test_processes_jobs_enqueued_by_another_process(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = start_worker(spawn, db_url)
    ids = [enqueue(db_url, "fast", {"n": n}) for n in range(5)] + [enqueue(db_url, "sync.fast", {})]
    for job_id in ids:
        worker.wait_for_event("job:complete", job_id=job_id)
    assert {job.status for job in jobs(db_url)} == {"completed"}
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    stopped = worker.wait_for_event("worker:stopped")
    assert stopped["code"] == 0
    total = worker.wait_for_event("summary", final=True)
    assert total["processed"] == 6
    # "failed" meant three numbers on three screens (issue 40): the log names its own apart.
    assert "failed_attempts=0 failed_for_good=0" in total["message"], total["message"]


def test_async_setup_function_is_awaited(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = start_worker(spawn, db_url, app="apps.worker_app:async_setup")
    job_id = enqueue(db_url, "fast")
    worker.wait_for_event("job:complete", job_id=job_id)
    worker.send(signal.SIGINT)
    assert worker.wait_exit() == 0


def test_textual_is_not_imported(spawn: Callable[..., CliProcess], db_url: str) -> None:
    # The app module and its setup assert at import/setup time; this handler checks while running.
    worker = start_worker(spawn, db_url)
    job_id = enqueue(db_url, "textual.check")
    worker.wait_for_event("job:complete", job_id=job_id)
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0


def test_json_log_lines_parse(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = start_worker(spawn, db_url, "--summary-interval", "0.2")
    ok = enqueue(db_url, "fast")
    bad = enqueue(db_url, "boom", {"why": "test"})
    worker.wait_for_event("job:complete", job_id=ok)
    fail = worker.wait_for_event("job:fail", job_id=bad)
    worker.wait_for_event("summary", final=False)
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    records = [json.loads(line) for line in worker.lines]  # every line is one JSON object
    for record in records:
        assert {"ts", "level", "event", "message"} <= set(record), record
        assert record["ts"].endswith("Z")
    assert fail["level"] == "warning" and fail["will_retry"] is True
    assert fail["name"] == "boom" and "boom" in fail["error"] and fail["fail_count"] == 1
    complete = next(r for r in records if r["event"] == "job:complete")
    assert complete["name"] == "fast" and complete["job_id"] == ok and complete["duration_ms"] >= 0
    start = next(r for r in records if r["event"] == "job:start")
    assert start["level"] == "debug"
    summary = next(r for r in records if r["event"] == "summary" and not r["final"])
    assert {"processed", "failed", "rate", "active"} <= set(summary)


def test_text_logs_are_one_line_per_event(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = spawn("--worker", "--app", APP, db_url)
    worker.wait_for_line(r"worker started on .* as ")
    job_id = enqueue(db_url, "fast")
    line = worker.wait_for_line(job_id)
    assert "job:complete" in line and "fast" in line and "INFO" in line
    assert line == line.rstrip(), "text log lines must not be padded"
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    assert not any(line.lstrip().startswith("{") for line in worker.lines)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_during_a_slow_job_lets_it_finish(spawn: Callable[..., CliProcess], db_url: str, sig: int) -> None:
    worker = start_worker(spawn, db_url)
    job_id = enqueue(db_url, "slow", {"seconds": 1.5})
    worker.wait_for_event("job:start", job_id=job_id)
    worker.send(sig)
    worker.wait_for_event("worker:stopping")
    assert worker.wait_exit(timeout=15) == 0
    assert get_job(db_url, job_id).status == "completed"
    events = [json.loads(line)["event"] for line in worker.lines]
    assert events.index("worker:stopping") < events.index("job:complete") < events.index("worker:stopped")


def test_second_signal_exits_promptly_and_leaves_the_job_for_recovery(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    worker = start_worker(spawn, db_url)
    job_id = enqueue(db_url, "slow", {"seconds": 120})
    worker.wait_for_event("job:start", job_id=job_id)
    worker.send(signal.SIGTERM)
    worker.wait_for_event("worker:stopping")
    began = time.monotonic()
    worker.send(signal.SIGTERM)
    code = worker.wait_exit(timeout=5)
    assert time.monotonic() - began < 5
    assert code == 128 + signal.SIGTERM
    worker.wait_for_event("worker:forced")
    job = get_job(db_url, job_id)
    assert job.status == "processing" and job.claimed_by  # stale recovery's to return


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_while_the_app_imports_says_so_and_exits_0(
    spawn: Callable[..., CliProcess], db_url: str, sig: signal.Signals
) -> None:
    """A single worker stopped while its --app module imported (a connection made at import
    to a server that does not answer) died by the signal: 143 or 129 and not a word, where a
    --processes child says it stopped before it started (a worker probe)."""
    worker = spawn("--worker", "--app", "apps.hanging_import_app:setup", db_url)
    worker.wait_for_line(lambda line: "hanging_import_app: importing" in line)
    worker.send(sig)
    assert worker.wait_exit() == 0, worker.stderr
    name = sig.name
    assert f"stopped before it started ({name} while loading apps.hanging_import_app:setup)" in worker.stderr
    assert "Traceback" not in worker.stderr


def _signalled_while_running(
    spawn: Callable[..., CliProcess], db_url: str, name: str, seconds: float, *extra: str
) -> tuple[CliProcess, str]:
    """A worker running a job of ``name`` (``seconds`` long), sent SIGTERM once it started."""
    worker = start_worker(spawn, db_url, *extra)
    job_id = enqueue(db_url, name, {"seconds": seconds})
    worker.wait_for_event("job:start", job_id=job_id)
    worker.send(signal.SIGTERM)
    return worker, job_id


def test_a_handler_blocking_the_loop_does_not_make_the_worker_deaf_to_signals(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    """An async handler that blocks the event loop (``time.sleep``) left a worker deaf to every
    signal, the second included: the loop hears them only when it runs, and only SIGKILL
    ended it (a worker probe). The first now says the loop is blocked; the second exits now."""
    worker, job_id = _signalled_while_running(spawn, db_url, "loop.blocker", 120)
    said = worker.wait_for_event("worker:stopping")
    assert "the event loop is blocked" in said["message"] and "send a signal again to exit now" in said["message"]
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 128 + signal.SIGTERM
    worker.wait_for_event("worker:forced")
    assert get_job(db_url, job_id).status == "processing"  # stale recovery's to return


def test_a_stop_a_blocked_loop_cannot_run_is_bounded_all_the_same(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    """One signal, and the loop stays blocked: the stop's own --shutdown-timeout runs on that
    loop, so it never fired. Past it (plus the handlers' grace and a margin) the worker exits
    5, as a timed-out stop does, and says why."""
    worker, job_id = _signalled_while_running(spawn, db_url, "loop.blocker", 120, "--shutdown-timeout", "0.1")
    assert worker.wait_exit(timeout=60) == 5
    said = worker.wait_for_event("worker:shutdown-timeout")
    assert "the event loop is blocked" in said["message"] and "stale recovery" in said["message"]
    assert get_job(db_url, job_id).status == "processing"


def test_shutdown_timeout_exits_5_even_with_a_stuck_sync_handler(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker, job_id = _signalled_while_running(spawn, db_url, "sync.slow", 60, "--shutdown-timeout", "0.5")
    assert worker.wait_exit(timeout=10) == 5
    error = worker.wait_for_event("job:error")
    assert error["error_type"] == "ShutdownTimeoutError"
    assert get_job(db_url, job_id).status == "processing"


def test_duration_stops_cleanly(spawn: Callable[..., CliProcess], db_url: str) -> None:
    worker = spawn("--worker", "--app", APP, "--log-format", "json", "--duration", "0.5", db_url)
    assert worker.wait_exit() == 0
    assert worker.wait_for_event("worker:stopping")["reason"] == "duration"


def test_instance_form_runs_the_apps_own_monque(spawn: Callable[..., CliProcess], db_url: str) -> None:
    env = {"TEST_APP_URL": db_url}
    worker = start_worker(spawn, db_url, app="apps.instance_app:monque", env=env)
    assert worker.wait_for_event("worker:started")["concurrency"] == 2
    job_id = enqueue(db_url, "fast", {"then": "followup"})
    worker.wait_for_event("job:complete", job_id=job_id)
    worker.wait_for_event("job:complete", name="followup")  # enqueued by the handler via the instance
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0


def one_line_error(process: CliProcess, code: int, *needles: str) -> str:
    assert process.wait_exit() == code, process.stderr
    assert len(process.lines) == 1, process.stderr
    line = process.lines[0]
    assert line.startswith("monque-tui: error: "), line
    assert "Traceback" not in process.stderr
    for needle in needles:
        assert needle in line, line
    return line


@pytest.mark.parametrize(
    ("app", "code", "needle"),
    [
        ("apps.nope:setup", 4, "cannot import module 'apps.nope'"),
        ("nosuchpackage.tasks:setup", 4, "cannot import module"),
        ("apps.worker_app:missing", 4, "has no attribute 'missing'"),
        ("apps.worker_app:NOT_AN_APP", 4, "it must be a Monque instance or a function"),
        ("apps.broken_app:setup", 4, "NameError: name 'undefined_name' is not defined (apps/broken_app.py:5)"),
        ("apps.worker_app:no_handlers", 4, "registered no handlers"),
        ("apps.worker_app:failing_setup", 4, "setup raised ValueError: setup could not reach the mail server"),
        ("apps.instance_app:empty", 4, "registered no handlers"),
        ("apps.worker_app", 2, "is not PACKAGE.MODULE:ATTR"),
        ("apps.exiting_app:setup", 4, "setup raised SystemExit: sys.exit(3) was called (apps/exiting_app.py:15)"),
    ],
)
def test_bad_app_exits_with_one_line(
    spawn: Callable[..., CliProcess], db_url: str, app: str, code: int, needle: str
) -> None:
    process = spawn("--worker", "--app", app, db_url, env={"TEST_APP_URL": db_url})
    one_line_error(process, code, needle)


def test_an_app_that_calls_sys_exit_as_it_loads_is_a_bad_app(spawn: Callable[..., CliProcess], db_url: str) -> None:
    process = spawn("--worker", "--app", "apps.exiting_app:setup", db_url, env={"EXIT_AT_IMPORT": "1"})
    said = "importing 'apps.exiting_app' failed: SystemExit: sys.exit('DATABASE_URL is not set') was called"
    one_line_error(process, 4, f"{said} (apps/exiting_app.py:11)")


def test_worker_needs_an_app(spawn: Callable[..., CliProcess], db_url: str) -> None:
    one_line_error(spawn("--worker", db_url), 2, "--worker needs --app")


def test_instance_form_rejects_settings_it_cannot_honour(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: object
) -> None:
    env = {"TEST_APP_URL": db_url}
    one_line_error(
        spawn("--worker", "--app", "apps.instance_app:monque", "--concurrency", "9", env=env),
        2,
        "--concurrency cannot change",
        "worker_concurrency=2",
    )
    one_line_error(
        spawn("--worker", "--app", "apps.instance_app:monque", "sqlite:///other.db", env=env),
        2,
        "is a Monque instance bound to",
    )


def test_store_that_cannot_be_opened_exits_3(spawn: Callable[..., CliProcess], tmp_path: object) -> None:
    missing = f"sqlite:///{tmp_path}/no/such/dir/jobs.db"
    one_line_error(spawn("--worker", "--app", APP, missing), 3, "does not exist")
    # The instance form skips the CLI's URL check: the engine's own open error must read as well.
    one_line_error(
        spawn("--worker", "--app", "apps.instance_app:monque", env={"TEST_APP_URL": missing}), 3, "does not exist"
    )


def test_env_configures_the_worker_and_flags_win(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: object
) -> None:
    env = {
        "MONQUE_URL": db_url,
        "MONQUE_APP": APP,
        "MONQUE_CONCURRENCY": "3",
        "MONQUE_LOG_FORMAT": "json",
        "MONQUE_INSTANCE_ID": "from-env",
        "MONQUE_DURATION": "0.3",
        "MONQUE_READ_ONLY": "1",
    }
    from_env = spawn("--worker", env=env)
    started = from_env.wait_for_event("worker:started")
    assert (started["concurrency"], started["instance_id"], started["url"]) == (3, "from-env", db_url)
    assert from_env.wait_exit() == 0  # MONQUE_READ_ONLY is shared config: ignored by the worker

    other = f"sqlite:///{tmp_path}/other.db"
    flags = spawn("--worker", "--concurrency", "7", "--instance-id", "from-flag", other, env=env)
    started = flags.wait_for_event("worker:started")
    assert (started["concurrency"], started["instance_id"], started["url"]) == (7, "from-flag", other)
    assert flags.wait_exit() == 0


def test_shutdown_timeout_exits_5_even_with_a_handler_that_swallows_cancellation(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    worker = start_worker(spawn, db_url, "--shutdown-timeout", "0.5")
    job_id = enqueue(db_url, "stubborn")
    worker.wait_for_event("job:start", job_id=job_id)
    worker.send(signal.SIGTERM)
    # Bounded by shutdown_timeout + the engine's grace (5 s); before the fix it never exited.
    assert worker.wait_exit(timeout=20) == 5
    error = worker.wait_for_event("job:error")
    assert error["error_type"] == "ShutdownTimeoutError"
    worker.wait_for_event("worker:stopped", code=5)
    assert get_job(db_url, job_id).status == "processing"  # left for stale recovery


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_store_file_deleted_or_replaced_under_the_worker_stops_it_with_exit_3(
    spawn: Callable[..., CliProcess], tmp_path: Path, how: str
) -> None:
    """It ran on: every poll, heartbeat and completion failed, the same job:error several times
    a second, and it ended "stopped cleanly" with exit 0. It says it once and stops."""
    path = tmp_path / "jobs.db"
    url = f"sqlite:///{path}"
    worker = start_worker(spawn, url)
    job_id = enqueue(url, "fast")
    worker.wait_for_event("job:complete", job_id=job_id)
    if how == "deleted":
        path.unlink()
    else:
        other = tmp_path / "other.db"
        enqueue(f"sqlite:///{other}", "fast")  # another valid store, moved over ours
        os.replace(other, path)
    assert worker.wait_exit() == 3
    assert worker.wait_for_event("worker:store-lost")["reason"] == "store-lost"
    errors = [line for line in worker.lines if '"event": "job:error"' in line or '"event":"job:error"' in line]
    assert len(errors) == 1 and "FileLostError" in errors[0]
    last = worker.lines[-1]
    assert last.startswith("monque-tui: error:") and f"was {how}" in last and "restart" in last
    assert not any("Traceback" in line for line in worker.lines)


def test_a_relative_store_path_survives_the_app_changing_directory(
    spawn: Callable[..., CliProcess], tmp_path: Path
) -> None:
    """``sqlite:///jobs.db`` with an app that calls ``os.chdir`` in its setup: the store
    looked for ``jobs.db`` in the new directory, called its file deleted, and the worker
    stopped with exit 3 at its first claim. The path is resolved once, at open."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    env = {"PYTHONPATH": str(Path(__file__).parent), "CHDIR_APP_TO": str(elsewhere)}
    worker = spawn(
        "--worker", "--app", "apps.chdir_app:setup", "--log-format", "json", "sqlite:///jobs.db", env=env, cwd=home
    )
    worker.wait_for_event("worker:started")
    url = f"sqlite:///{home / 'jobs.db'}"
    job_id = enqueue(url, "fast")
    worker.wait_for_event("job:complete", job_id=job_id)
    worker.send(signal.SIGTERM)
    assert worker.wait_exit() == 0
    assert not any('"job:error"' in line for line in worker.lines)
    assert not (elsewhere / "jobs.db").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_while_the_apps_setup_hangs_ends_the_worker_at_once(
    spawn: Callable[..., CliProcess], db_url: str, sig: int
) -> None:
    """An async setup that never returns (a server that does not answer): the first stop was
    ignored until a second one forced the exit. Nothing is claimed yet, so it exits 0 now."""
    job_id = enqueue(db_url, "never", {})
    worker = spawn("--worker", "--app", "apps.hanging_setup_app:setup", "--log-format", "json", db_url)
    worker.wait_for_line(lambda _: "hanging_setup_app: setting up" in worker.stderr)
    worker.send(sig)
    assert worker.wait_exit(timeout=60) == 0
    stopped = worker.wait_for_event("worker:stopped")
    assert stopped["code"] == 0 and "setup of" in stopped["message"], stopped
    assert "worker:forced" not in worker.stderr
    assert get_job(db_url, job_id).status == "pending"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("attr", ["setup", "async_setup"])
def test_a_stop_while_the_apps_setup_blocks_the_loop_ends_the_worker_at_once(
    spawn: Callable[..., CliProcess], db_url: str, sig: int, attr: str
) -> None:
    """A setup that blocks the event loop (a sync client with no timeout): the worker hears
    its signals through the loop, so it heard neither the first nor a second one (SIGKILL
    alone ended it). The signal interrupts the setup now, and the worker exits 0."""
    job_id = enqueue(db_url, "never", {})
    worker = spawn("--worker", "--app", f"apps.blocking_setup_app:{attr}", "--log-format", "json", db_url)
    worker.wait_for_line(lambda _: "blocking_setup_app: setting up" in worker.stderr)
    worker.send(sig)
    assert worker.wait_exit(timeout=60) == 0
    stopped = worker.wait_for_event("worker:stopped")
    assert stopped["code"] == 0 and "setup of" in stopped["message"], stopped
    assert "Traceback" not in worker.stderr and "worker:forced" not in worker.stderr
    assert get_job(db_url, job_id).status == "pending"
