"""Mistakes and environment faults on the command line end in one clear line, never a traceback.

A read-only URL for a mode that writes, an ``--app`` that does not parse, a bad MongoDB URL
option (masked), a bad export filter or target (the existing file left untouched), a full
disk, a bad ``--window``, an instance id with an escape: each is one ``monque-tui: error:``
line with exit 2 (4 for the user's own code), nothing stored or overwritten. A closed pipe
(``| head -1``) is not an error at all: exit 141, nothing on stderr. The real command in a
subprocess (faults found by the acceptance probe, each failing on commit 4315533); the tests
synchronise on log lines and stored state, never on sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import DEFAULT_TIMEOUT, CliProcess, _run, enqueue, get_job

APP = "apps.worker_app:setup"


def one_line_error(process: CliProcess, code: int, *needles: str) -> str:
    assert process.wait_exit() == code, process.stderr
    assert len(process.lines) == 1, process.stderr
    line = process.lines[0]
    assert line.startswith("monque-tui: error: "), line
    assert "internal error" not in line and "Traceback" not in process.stderr
    for needle in needles:
        assert needle in line, line
    return line


# -- a read-only URL for a mode that must write: a usage error, not "internal error" --------------
@pytest.mark.parametrize(
    "mode", [("--worker", "--app", APP), ("--demo", "--headless")], ids=["worker", "demo-headless"]
)
def test_read_only_url_for_a_writing_mode_is_one_usage_line(
    spawn: Callable[..., CliProcess], db_url: str, mode: tuple[str, ...]
) -> None:
    job_id = enqueue(db_url, "fast")
    path = Path(db_url.removeprefix("sqlite:///"))
    before = path.read_bytes()
    one_line_error(spawn(*mode, "--duration", "5", f"{db_url}?mode=ro"), 2, "mode=ro", "drop mode=ro")
    assert path.read_bytes() == before
    assert get_job(db_url, job_id).status == "pending"


# -- an --app module that does not parse: the error points at the user's file, not at ours --------
def test_app_with_a_syntax_error_names_the_users_file_only(spawn: Callable[..., CliProcess], tmp_path: Path) -> None:
    (tmp_path / "broken_syntax.py").write_text("def setup(monque):\n    monque.register(\n")
    line = one_line_error(
        spawn("--worker", "--app", "broken_syntax:setup", f"sqlite:///{tmp_path / 'jobs.db'}", cwd=tmp_path),
        4,
        "SyntaxError",
        "broken_syntax.py",
    )
    assert "app_loader" not in line and "monque_tui" not in line, line


# -- MongoDB URL options: refused in one line before any connection, never a driver warning -------
@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("replSet=rs0", "option 'replSet'"),
        ("authMechanism=NOPE", "option 'authMechanism'"),
        ("replicaSet=a&replicaSet=b", "given more than once"),
        ("tlsCertificateKeyFilePassword=k3yp4ss&retryWrites=maybe", "option 'retryWrites'"),
    ],
)
def test_bad_mongodb_url_option_is_one_masked_usage_line(
    spawn: Callable[..., CliProcess], query: str, needle: str
) -> None:
    line = one_line_error(spawn("--read-only", f"mongodb://u:s3cr3t@127.0.0.1:9/app?{query}"), 2, needle)
    assert "s3cr3t" not in line and "k3yp4ss" not in line and "UserWarning" not in line


# -- output: a failed export never destroys a file; a closed pipe or a full disk is not a "bug" ----
def test_export_with_a_bad_filter_leaves_an_existing_file_untouched(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path
) -> None:
    enqueue(db_url, "fast")
    target = tmp_path / "failed.jsonl"
    target.write_text("yesterday's export\n")
    one_line_error(spawn("export", "--name", "", "--output", str(target), "--url", db_url), 2, "--name")
    process = spawn("export", "--status", "failed", "--name", "fast", "--output", str(tmp_path), "--url", db_url)
    one_line_error(process, 2, "is a directory")
    assert target.read_text() == "yesterday's export\n"
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("jobs.db")] == ["failed.jsonl"]
    process = spawn("export", "--output", str(target), "--url", db_url)
    assert process.wait_exit() == 0, process.stderr
    assert json.loads(target.read_text())["name"] == "fast"  # a good export replaces it whole


def test_export_into_a_closed_pipe_exits_141_quietly(db_url: str) -> None:
    _run(db_url, lambda m: m.enqueue_many([{"name": "bulk", "data": {"n": n, "pad": "x" * 200}} for n in range(1500)]))
    process = subprocess.Popen(
        [sys.executable, "-m", "monque_tui", "export", "--url", db_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")},
    )
    assert process.stdout is not None and process.stderr is not None
    assert json.loads(process.stdout.readline())["name"] == "bulk"
    process.stdout.close()  # `| head -1`: the reader goes away with most of the export unread
    assert process.wait(DEFAULT_TIMEOUT) == 141
    assert process.stderr.read() == b""


def test_export_to_a_full_disk_is_one_line(db_url: str) -> None:
    enqueue(db_url, "fast")
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "monque_tui", "export", "--url", db_url],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=DEFAULT_TIMEOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")},
        )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["monque-tui: error: cannot write stdout: No space left on device"]


def test_health_with_a_bad_window_prints_no_table_header(spawn: Callable[..., CliProcess], db_url: str) -> None:
    enqueue(db_url, "fast")
    process = spawn("health", "--window", "-5", "--url", db_url)
    one_line_error(process, 2, "--window")  # the flag, not the engine parameter
    assert process.stdout_lines == []


@pytest.mark.parametrize("mode", [("--app", APP), ("--demo",)], ids=["console-app", "console-demo"])
def test_read_only_url_with_in_process_workers_is_refused_before_the_console_opens(
    spawn: Callable[..., CliProcess], db_url: str, mode: tuple[str, ...]
) -> None:
    enqueue(db_url, "fast")
    path = Path(db_url.removeprefix("sqlite:///"))
    before = path.read_bytes()
    # No terminal here: on the base commit this reached the terminal check (or, in one, the
    # console opened and exited 1 with "setup failed"); the URL is wrong whatever the terminal.
    one_line_error(spawn(*mode, f"{db_url}?mode=ro"), 2, "mode=ro", "drop mode=ro", "--read-only alone")
    assert path.read_bytes() == before


def test_instance_id_with_an_escape_is_one_usage_line(spawn: Callable[..., CliProcess], db_url: str) -> None:
    line = one_line_error(
        spawn("--worker", "--app", APP, "--instance-id", "w\x1b[2J1", db_url), 2, "control characters"
    )
    assert "\x1b" not in line  # quoted, never sent to the terminal raw
