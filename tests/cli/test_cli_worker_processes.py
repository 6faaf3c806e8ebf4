"""``monque-tui --worker --processes N``: a supervisor and N real worker processes, real signals."""

from __future__ import annotations

import itertools
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CliProcess, Samples, enqueue, get_job, scrape, wait_until

APP = "apps.worker_app:setup"


def start_group(spawn: Callable[..., CliProcess], url: str, *extra: str, processes: str = "2") -> CliProcess:
    group = spawn(
        "--worker",
        "--app",
        APP,
        "--processes",
        processes,
        "--log-format",
        "json",
        "--log-level",
        "debug",
        "--summary-interval",
        "0",
        *extra,
        url,
    )
    for slot in range(1, int(processes) + 1):
        group.wait_for_event("supervisor:child-started", slot=slot)
    return group


def events(group: CliProcess, name: str) -> list[dict[str, Any]]:
    found = []
    for line in list(group.lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == name:
            found.append(record)
    return found


def child_events(group: CliProcess) -> list[dict[str, Any]]:
    return events(group, "supervisor:child-started")


def gone(pid: int) -> bool:
    """Exited (a zombie counts: its parent may not reap it at once)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return "\nState:\tZ" in status


def wait_gone(pids: list[int], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(gone(pid) for pid in pids):
        assert time.monotonic() < deadline, f"still running: {[pid for pid in pids if not gone(pid)]}"
        time.sleep(0.05)


def hold_both(group: CliProcess, url: str, gate: Path) -> list[str]:
    """Ten jobs held running until ``gate`` exists: at concurrency 5 a process holds at most
    five, so both processes must have claimed some. Their ids."""
    ids = [enqueue(url, "gated", {"gate": str(gate)}) for _ in range(10)]
    group.wait_for_line(lambda _: len(events(group, "job:start")) >= 10)
    assert {event["slot"] for event in events(group, "job:start")} == {1, 2}
    return ids


def test_each_child_has_its_own_instance_and_both_run_jobs(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    group = start_group(spawn, db_url)
    started = child_events(group)
    assert len({event["instance_id"] for event in started}) == 2
    assert len({event["pid"] for event in started}) == 2
    supervisor = group.wait_for_event("supervisor:started")
    for slot in (1, 2):
        worker = group.wait_for_event("worker:started", slot=slot)
        assert worker["supervisor"] == supervisor["supervisor"]
        assert worker["concurrency_by_name"]["fast"] == 5  # the registered concurrency, in each
    ids = hold_both(group, db_url, gate)
    gate.touch()
    for job_id in ids:
        group.wait_for_event("job:complete", job_id=job_id)
    listed = spawn("instances", "--json", db_url)
    assert listed.wait_exit() == 0
    registry = {record["id"]: record for record in map(json.loads, listed.stdout_lines)}
    for event in started:
        assert registry[event["instance_id"]]["supervisor"] == supervisor["supervisor"]
    as_text = spawn("instances", db_url)
    assert as_text.wait_exit() == 0
    header, *rows = as_text.stdout_lines
    assert header.split("\t")[-1] == "SUPERVISOR"  # the text listing groups them too, not only --json
    children = {row.split("\t")[0]: row.split("\t")[-1] for row in rows}
    assert all(children[event["instance_id"]] == supervisor["supervisor"] for event in started)
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 0
    assert len(events(group, "worker:stopped")) == 2
    assert group.wait_for_event("supervisor:stopped")["code"] == 0


def test_a_signal_reaches_each_child_once_and_in_flight_jobs_finish(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    group = start_group(spawn, db_url)
    job_id = enqueue(db_url, "slow", {"seconds": 1.0})
    group.wait_for_event("job:start", job_id=job_id)
    group.send(signal.SIGINT)
    assert group.wait_exit() == 0
    assert get_job(db_url, job_id).status == "completed"
    assert not events(group, "worker:forced")  # one SIGINT each, not two


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_to_the_supervisor_and_every_child_at_once_still_stops_each_gracefully(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path, sig: signal.Signals
) -> None:
    """What ``pkill -f monque-tui`` and systemd's control-group kill do (and a terminal's
    Ctrl-C, were the children in its process group): every process gets the signal. Each
    child hears it from outside and the supervisor's request, which count as one stop: its
    running jobs complete, and every exit code is the graceful one. (A forwarded signal
    made it a second one, and the children exited at once.)"""
    gate = tmp_path / "gate"
    group = start_group(spawn, db_url)
    pids = [int(event["pid"]) for event in child_events(group)]
    ids = hold_both(group, db_url, gate)
    os.killpg(group.proc.pid, sig)  # the supervisor's process group, as a terminal signals it
    for pid in pids:
        os.kill(pid, sig)
    # Both stops have reached each child (or the child is gone) before its jobs may finish.
    wait_until(
        lambda: all(
            gone(pid) or (heard_from_outside(group, pid) and heard_from_supervisor(group, pid)) for pid in pids
        ),
        what="each child to hear the signal and the supervisor",
    )
    gate.touch()
    assert group.wait_exit() == 0
    assert not events(group, "worker:forced")
    assert [event["code"] for event in events(group, "worker:stopped")] == [0, 0]
    assert {get_job(db_url, job_id).status for job_id in ids} == {"completed"}


def _slot_of(group: CliProcess, pid: int) -> int:
    return next(int(event["slot"]) for event in child_events(group) if int(event["pid"]) == pid)


def heard_from_outside(group: CliProcess, pid: int) -> bool:
    return any(event.get("slot") == _slot_of(group, pid) for event in events(group, "worker:stopping"))


def heard_from_supervisor(group: CliProcess, pid: int) -> bool:
    return any(event.get("slot") == _slot_of(group, pid) for event in events(group, "worker:stop-requested"))


def test_a_second_signal_to_the_supervisor_forces_every_child(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path
) -> None:
    """The supervisor's own second signal still means "now", for the whole group."""
    gate = tmp_path / "gate"
    group = start_group(spawn, db_url)
    pids = [int(event["pid"]) for event in child_events(group)]
    ids = hold_both(group, db_url, gate)
    group.send(signal.SIGTERM)
    wait_until(lambda: all(heard_from_supervisor(group, pid) for pid in pids), what="each child to hear the supervisor")
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 128 + signal.SIGTERM
    wait_gone(pids)
    forced = events(group, "worker:forced")
    assert sorted(event["slot"] for event in forced) == [1, 2] and all("supervisor" in e["message"] for e in forced)
    assert {get_job(db_url, job_id).status for job_id in ids} == {"processing"}  # left for stale recovery


def test_a_child_that_dies_is_restarted_and_logged(spawn: Callable[..., CliProcess], db_url: str) -> None:
    group = start_group(spawn, db_url)
    victim = next(event for event in child_events(group) if event["slot"] == 1)
    os.kill(int(victim["pid"]), signal.SIGKILL)
    died = group.wait_for_event("supervisor:child-died", slot=1)
    assert died["code"] == -signal.SIGKILL and "SIGKILL" in died["message"]
    group.wait_for_line(lambda _: len([e for e in child_events(group) if e["slot"] == 1]) == 2)
    job_id = enqueue(db_url, "fast")
    group.wait_for_event("job:complete", job_id=job_id)
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 0


def test_a_crash_loop_at_start_stops_the_group_with_its_own_exit_code(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    group = spawn("--worker", "--app", "apps.crash_app:setup", "--processes", "2", "--log-format", "json", db_url)
    assert group.wait_exit(timeout=60) == 7
    crash = group.wait_for_event("supervisor:crash-loop")
    assert crash["failed_starts"] == 5 and crash["code"] == 1
    assert "5 times in a row" in crash["message"]
    assert (
        len(events(group, "supervisor:start-failed")) >= 4
    )  # the slot that stopped the group was restarted 4 times before
    assert group.wait_for_event("supervisor:stopped")["code"] == 7


def test_jobs_that_kill_their_process_are_deaths_after_start_not_a_crash_loop(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    """A child claimed its first job before telling the supervisor it had started, so a job
    that kills its process looked like a crash at start: five of them in the queue stopped
    the group with exit 7, the healthy jobs left pending (a worker probe). Each is now a death
    after start: restarted with backoff, and the group goes on."""
    poisoned = [enqueue(db_url, "poison", {"n": n}) for n in range(3)]
    group = spawn("--worker", "--app", APP, "--processes", "1", "--concurrency", "1", "--log-format", "json", db_url)
    group.wait_for_line(lambda _: len(events(group, "supervisor:child-died")) == 3)
    job_id = enqueue(db_url, "fast")
    group.wait_for_event("job:complete", job_id=job_id)
    assert events(group, "supervisor:start-failed") == [] and events(group, "supervisor:crash-loop") == []
    assert all(get_job(db_url, poisoned_id).status == "processing" for poisoned_id in poisoned)  # stale recovery's
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 0


def test_an_app_that_cannot_load_stops_at_once_with_the_workers_code(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    group = spawn("--worker", "--app", "apps.broken_app:setup", "--processes", "2", db_url)
    assert group.wait_exit() == 4
    assert "restarting cannot fix that" in group.stderr
    assert "NameError" in group.stderr  # the child's own one-line error
    assert "Traceback" not in group.stderr


def test_children_stop_gracefully_when_the_supervisor_is_killed(spawn: Callable[..., CliProcess], db_url: str) -> None:
    group = start_group(spawn, db_url)
    pids = [int(event["pid"]) for event in child_events(group)]
    group.proc.send_signal(signal.SIGKILL)  # the supervisor alone: the children have a group of their own
    # Each stops as on SIGTERM (not killed): its lines still reach the pipe the test reads.
    group.wait_for_line(lambda _: len(events(group, "worker:stopped")) == 2)
    wait_gone(pids)


def test_a_shutdown_timeout_in_a_child_is_the_groups_exit_code(spawn: Callable[..., CliProcess], db_url: str) -> None:
    group = start_group(spawn, db_url, "--shutdown-timeout", "0.5")
    job_id = enqueue(db_url, "stubborn")
    group.wait_for_event("job:start", job_id=job_id)
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 5


def test_instance_id_is_suffixed_per_slot(spawn: Callable[..., CliProcess], db_url: str) -> None:
    group = start_group(spawn, db_url, "--instance-id", "web-7")
    assert sorted(str(event["instance_id"]) for event in child_events(group)) == ["web-7-1", "web-7-2"]
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 0


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", ""])
def test_bad_process_counts_are_one_line_usage_errors(
    spawn: Callable[..., CliProcess], db_url: str, value: str
) -> None:
    group = spawn("--worker", "--app", APP, f"--processes={value}", db_url)
    assert group.wait_exit() == 2
    assert len(group.lines) == 1 and "--processes" in group.stderr and "auto" in group.stderr


def test_processes_is_for_the_worker_only(spawn: Callable[..., CliProcess], db_url: str) -> None:
    demo = spawn("--demo", "--headless", "--processes", "2", db_url)
    assert demo.wait_exit() == 2
    assert "--processes does not apply" in demo.stderr


# -- one /metrics for the group ---------------------------------------------------------------------------
def total(samples: Samples, metric: str, **labels: str) -> float:
    return sum(
        value
        for (name, have), value in samples.items()
        if name == metric and all(dict(have).get(k) == v for k, v in labels.items())
    )


def scrape_when(port: int, ready: Callable[[Samples], bool]) -> Samples:
    """Scrape until ``ready`` holds (the store's gauges are read at most once a second)."""
    found: list[Samples] = []

    def check() -> bool:
        samples = scrape(port)
        found[:] = [samples]
        return ready(samples)

    wait_until(check, what="the group's metrics")
    return found[0]


def test_metrics_serve_the_group_counters_and_histograms_summed_and_the_store_once(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path
) -> None:
    group = start_group(spawn, db_url, "--metrics", "127.0.0.1:0")
    port = int(group.wait_for_event("metrics:serving")["port"])
    gate = tmp_path / "gate"
    ids = hold_both(group, db_url, gate)  # both processes run some: the sums below add two children
    jobs = len(ids)
    gate.touch()
    for job_id in ids:
        group.wait_for_event("job:complete", job_id=job_id)
    samples = scrape_when(port, lambda s: total(s, "monque_jobs", status="completed") == jobs)
    assert total(samples, "monque_jobs_processed_total", name="gated") == jobs
    assert total(samples, "monque_job_duration_seconds_count", name="gated") == jobs
    assert total(samples, "monque_job_duration_seconds_bucket", name="gated", le="+Inf") == jobs
    buckets = sorted(
        (float(dict(labels)["le"]), value)
        for (metric, labels), value in samples.items()
        if metric == "monque_job_duration_seconds_bucket" and dict(labels).get("name") == "gated"
    )
    # Summed bucket by bucket, the group's histogram stays cumulative. (Not "none under 1 ms":
    # a child emits job:start before its handler task runs, so on a loaded machine the gate
    # can be touched before a handler first looks, and that job takes under a millisecond.)
    assert len(buckets) > 2 and buckets[-1] == (float("inf"), jobs)
    assert all(low[1] <= high[1] for low, high in itertools.pairwise(buckets))
    assert total(samples, "monque_job_duration_seconds_sum", name="gated") > 0
    assert total(samples, "monque_jobs", name="gated", status="completed") == jobs  # the store, not twice
    assert total(samples, "monque_worker_processes", state="up") == 2
    assert total(samples, "monque_feed_state") == 2  # one state per process
    # A child killed: what it had counted stays in the group's counters (they never go down).
    victim = next(event for event in child_events(group) if event["slot"] == 2)
    os.kill(int(victim["pid"]), signal.SIGKILL)
    group.wait_for_line(lambda _: len([e for e in child_events(group) if e["slot"] == 2]) == 2)
    after = scrape_when(port, lambda s: total(s, "monque_worker_processes", state="up") == 2)
    assert total(after, "monque_jobs_processed_total", name="gated") == jobs
    assert total(after, "monque_job_duration_seconds_count", name="gated") == jobs
    assert total(after, "monque_worker_restarts_total") == 1
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 0


def test_help_describes_processes_and_the_crash_loop_exit_code(spawn: Callable[..., CliProcess]) -> None:
    helped = spawn("--help")
    assert helped.wait_exit() == 0
    text = "\n".join(helped.stdout_lines)
    assert "--processes N|auto" in text and "MONQUE_PROCESSES" in text
    assert "7  --worker --processes" in text
    assert "--processes auto" in text  # an example


def test_the_instance_form_runs_in_each_child_without_a_url(spawn: Callable[..., CliProcess], db_url: str) -> None:
    """An --app naming a Monque bound to its own URL: no URL given, none passed to the children
    (a URL of the supervisor's default would have been "a different store" to each child)."""
    group = spawn(
        "--worker",
        "--app",
        "apps.instance_app:monque",
        "--processes",
        "2",
        "--log-format",
        "json",
        env={"TEST_APP_URL": db_url},
    )
    for slot in (1, 2):
        group.wait_for_event("supervisor:child-started", slot=slot)
    job_id = enqueue(db_url, "fast")
    group.wait_for_event("job:complete", job_id=job_id)
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 0


def test_lifeline_requests_are_parsed_and_unknown_ones_ignored() -> None:
    from monque_tui.worker.child_link import STOP_REQUEST, force_request, parse_request

    assert isinstance(parse_request(STOP_REQUEST.strip()), str)
    assert parse_request(force_request(signal.SIGINT).strip()) is signal.SIGINT
    for line in (b"", b"stop now", b"force", b"force x", b"force 999", b"reload"):
        assert parse_request(line) is None


def group_of_two(spawn: Callable[..., CliProcess], db_url: str, app: str) -> CliProcess:
    """Two children of ``app``, logging JSON, with a shutdown budget far beyond the tests' waits
    (a group that waited it out instead of stopping at once fails them rather than passing late)."""
    return spawn(
        "--worker", "--app", app, "--processes", "2", "--shutdown-timeout", "600", "--log-format", "json", db_url
    )


def stop_at_once(group: CliProcess, marker: str, said: str) -> None:
    """Once both children logged ``marker``, SIGTERM the group: it exits 0 at once, each child
    saying it stopped before it started (``said``), and the supervisor killed nobody."""
    group.wait_for_line(lambda _: group.stderr.count(marker) == 2)
    group.send(signal.SIGTERM)
    assert group.wait_exit(timeout=60) == 0
    stopped = events(group, "worker:stopped")
    assert len(stopped) == 2 and all(said in event["message"] for event in stopped), stopped
    assert events(group, "supervisor:stopped")[0]["code"] == 0
    assert not events(group, "supervisor:killed")


def test_children_still_loading_their_app_stop_at_once_with_the_group(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    """An --app whose import hangs: the stop reaches the children while they load it, and the
    group exits 0 at once (nothing was open, no job claimed). They used to heed nothing until
    they ran their worker, so the group waited out --shutdown-timeout, killed them and exited
    5 as a shutdown timeout that "left jobs for stale recovery"."""
    stop_at_once(
        group_of_two(spawn, db_url, "apps.hanging_import_app:setup"), "hanging_import_app: importing", "while loading"
    )


def _children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # the field after the state: the parent's pid
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize(
    ("app", "marker"),
    [
        ("apps.hanging_import_app:setup", "hanging_import_app: importing"),
        ("apps.blocking_setup_app:setup", "blocking_setup_app: setting up"),
    ],
    ids=["loading-the-app", "setup-blocks-the-loop"],
)
def test_children_exit_when_the_supervisor_is_killed(
    spawn: Callable[..., CliProcess], db_url: str, app: str, marker: str
) -> None:
    """Killed while its children loaded a hanging --app, or while their setup blocked their
    loops, the supervisor left them running for ever: they are in a process group of their
    own (no signal reaches them), read no lifeline yet while loading, and heard its end only
    through the loop while the setup blocked it. They exit now."""
    group = spawn("--worker", "--app", app, "--processes", "2", db_url)
    group.wait_for_line(lambda _: group.stderr.count(marker) == 2)
    children = _children_of(group.proc.pid)
    assert len(children) == 2, children
    group.proc.send_signal(signal.SIGKILL)
    wait_gone(children)


@pytest.mark.parametrize(
    "app",
    ["apps.hanging_setup_app:setup", "apps.blocking_setup_app:setup", "apps.blocking_setup_app:async_setup"],
    ids=["awaits-for-ever", "sync-blocks-the-loop", "async-blocks-the-loop"],
)
def test_children_whose_setup_hangs_stop_at_once_with_the_group(
    spawn: Callable[..., CliProcess], db_url: str, app: str
) -> None:
    """An --app whose setup never returns: the children heeded the supervisor's stop only once
    set up, so the group waited out --shutdown-timeout, killed them and exited 5. A setup
    that awaits for ever is cancelled; one that blocks the event loop (a sync client with no
    timeout) never let the lifeline's request through the loop, and is now interrupted when
    the loop does not answer it, as a signal interrupts it in a single worker."""
    group = group_of_two(spawn, db_url, app)
    stop_at_once(group, f"{app.split('.')[1].split(':')[0]}: setting up", "setup of")
    assert "Traceback" not in group.stderr


def test_a_childs_blocked_loop_does_not_outlive_the_supervisors_forced_stop(
    spawn: Callable[..., CliProcess], db_url: str
) -> None:
    """The supervisor's "force" reached a child through its event loop: a child whose async
    handler blocked the loop stayed alive after the supervisor's second signal made it exit
    (its children have a process group of their own). It is carried out from the lifeline's
    thread now (a review of the blocked-loop fix)."""
    group = start_group(spawn, db_url, processes="1")
    (child,) = [int(event["pid"]) for event in child_events(group)]
    job_id = enqueue(db_url, "loop.blocker", {"seconds": 120})
    group.wait_for_event("job:start", job_id=job_id)
    group.send(signal.SIGTERM)
    group.wait_for_event("supervisor:stopping")
    group.send(signal.SIGTERM)
    assert group.wait_exit() == 128 + signal.SIGTERM
    wait_gone([child])
