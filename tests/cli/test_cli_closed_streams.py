"""Probe 7: the command line as scripts use it — closed streams, bad names, file formats.

Real processes throughout. A stream is closed the way a shell does it (``>&-``, ``2>&-``):
the child is started with that descriptor closed, so Python sets ``sys.stdout`` or
``sys.stderr`` to ``None`` at start-up.

Found by driving ``monque-tui`` by hand:

* ``export 2>&-``: ``print(..., file=sys.stderr)`` with ``sys.stderr`` None writes to
  *stdout*, so progress and summary lines went into the JSON Lines stream.
* ``paused >&-`` exited 0 having printed nothing; ``export >&-`` was "internal error".
* ``pause '' sqlite:///typo.db`` rejected the name but had already created ``typo.db``.
* ``export --output failed.csv`` wrote JSON Lines into ``failed.csv``.
* The console with stderr in a file (Textual draws there) showed a blank screen; with
  ``2>&-`` it hung, deaf to q and ctrl+c.
"""

from __future__ import annotations

import csv
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR, enqueue, jobs

PY = [sys.executable, "-m", "monque_tui"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}


def _closing(fd: int) -> object:
    def close() -> None:
        os.close(fd)

    return close


def run_with_closed(fd: int, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """Run ``monque-tui ARGS`` with descriptor ``fd`` closed (1: ``>&-``, 2: ``2>&-``), capturing the other."""
    other = {"stdout": subprocess.PIPE} if fd == 2 else {"stderr": subprocess.PIPE}
    return subprocess.run(
        [*PY, *args],
        cwd=CLI_DIR,
        env=_env(),
        preexec_fn=_closing(fd),  # type: ignore[arg-type]
        timeout=timeout,
        **other,  # type: ignore[call-overload]
    )


@pytest.mark.parametrize(
    "command",
    [
        ["paused"],
        ["instances"],
        ["health"],
        ["export"],
        ["paused", "--json"],
        ["export", "--format", "csv"],
        ["repair-counts"],
        ["migrate"],
        ["delete", "--name", "fast", "--yes"],
    ],
)
def test_a_command_that_prints_results_refuses_a_closed_stdout(db_url: str, command: list[str]) -> None:
    enqueue(db_url, "fast", {"n": 1})
    before = [(job.id, job.status) for job in jobs(db_url)]
    done = run_with_closed(1, *command, db_url)
    line = done.stderr.decode()
    assert done.returncode == 2, line
    assert line.count("\n") == 1 and "stdout is closed" in line and "Traceback" not in line, line
    assert [(job.id, job.status) for job in jobs(db_url)] == before


def test_export_with_a_closed_stdout_still_writes_its_output_file(tmp_path: Path, db_url: str) -> None:
    job_id = enqueue(db_url, "fast", {"n": 1})
    out = tmp_path / "out.jsonl"
    done = run_with_closed(1, "export", "--output", str(out), db_url)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["_id"] == job_id


def test_export_with_stderr_closed_puts_nothing_but_jobs_on_stdout(db_url: str) -> None:
    for n in range(3):
        enqueue(db_url, "fast", {"n": n})
    done = run_with_closed(2, "export", db_url)
    assert done.returncode == 0
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 3, lines  # the "exported 3 job(s) to stdout" line went here
    assert sorted(json.loads(line)["data"]["n"] for line in lines) == [0, 1, 2]


def test_an_error_with_stderr_closed_is_not_written_to_stdout(db_url: str) -> None:
    done = run_with_closed(2, "export", "--status", "bogus", db_url)
    assert done.returncode == 2
    assert done.stdout == b""


@pytest.mark.parametrize("name", ["", "two words", "x" * 300])
@pytest.mark.parametrize("command", ["pause", "resume"])
def test_an_invalid_name_is_refused_before_a_store_file_is_made(tmp_path: Path, command: str, name: str) -> None:
    path = tmp_path / "typo.db"
    done = subprocess.run(
        [*PY, command, name, f"sqlite:///{path}"], cwd=CLI_DIR, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"monque-tui: error: {command}: Invalid job name")
    assert done.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_export_to_a_csv_path_writes_csv_unless_told_otherwise(tmp_path: Path, db_url: str) -> None:
    job_id = enqueue(db_url, "fast", {"n": 1})
    out = tmp_path / "failed.CSV"
    done = subprocess.run(
        [*PY, "export", "--output", str(out), db_url], cwd=CLI_DIR, env=_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith("(csv)")
    rows = list(csv.DictReader(out.open(newline="")))
    assert [row["_id"] for row in rows] == [job_id]
    explicit = tmp_path / "other.csv"
    done = subprocess.run(
        [*PY, "export", "--format", "jsonl", "-o", str(explicit), db_url], cwd=CLI_DIR, env=_env(), capture_output=True
    )
    assert done.returncode == 0
    assert json.loads(explicit.read_text())["_id"] == job_id  # a --format given wins


def _read_until(fd: int, needle: bytes, timeout: float = 30) -> bytes:
    """What the pty shows until ``needle`` appears (the console's screen)."""
    import select
    import time

    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} never appeared; saw {seen[-500:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def test_the_console_with_stderr_in_a_file_draws_on_the_terminal(tmp_path: Path, db_url: str) -> None:
    """stdin and stdout are a real terminal (a pty); stderr, where Textual draws, goes to a file.
    The screen went into the file and the terminal stayed blank; then (probe 7) the console
    refused to start. It now draws on the terminal and q exits 0; the file gets no escape codes."""
    enqueue(db_url, "fast", {"n": 1})
    log = tmp_path / "stderr.txt"
    leader, follower = pty.openpty()
    try:
        with log.open("wb") as err:
            child = subprocess.Popen(
                [*PY, db_url],
                cwd=CLI_DIR,
                env=_env(),
                start_new_session=True,
                stdin=follower,
                stdout=follower,
                stderr=err,
            )
        try:
            _read_until(leader, b"completed/s")
            os.write(leader, b"q")
            code = child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    finally:
        os.close(follower)
        os.close(leader)
    assert code == 0
    assert log.read_bytes() == b"", log.read_text(errors="replace")  # the whole text, should one appear


def test_the_console_refuses_a_closed_stderr(tmp_path: Path, db_url: str) -> None:
    """With ``2>&-`` the console hung blank, deaf to q and ctrl+c, spinning a core."""
    enqueue(db_url, "fast", {"n": 1})
    leader, follower = pty.openpty()
    try:
        child = subprocess.Popen(
            [*PY, db_url],
            cwd=CLI_DIR,
            env=_env(),
            start_new_session=True,
            stdin=follower,
            stdout=follower,
            preexec_fn=_closing(2),
        )
        try:
            code = child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    finally:
        os.close(follower)
        os.close(leader)
    assert code == 2


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command", [["paused"], ["instances"], ["health"], ["--help"], ["--version"], ["export", "--help"]]
)
def test_a_full_disk_behind_stdout_is_one_line_and_exit_2(db_url: str, command: list[str]) -> None:
    """``paused > /dev/full`` read "internal error: OSError", exit 1; ``--help > /dev/full`` lost
    its text and exited 0 (argparse drops write errors)."""
    enqueue(db_url, "fast", {"n": 1})
    subprocess.run([*PY, "pause", "fast", db_url], cwd=CLI_DIR, env=_env(), capture_output=True, check=True)
    args = [*command, db_url] if not command[-1].startswith("-") else command
    with open("/dev/full", "w") as full:
        done = subprocess.run([*PY, *args], cwd=CLI_DIR, env=_env(), stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode() == "monque-tui: error: cannot write stdout: No space left on device\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_bulk_action_behind_a_full_stdout_still_says_what_it_did(db_url: str) -> None:
    """``delete --yes > /dev/full`` deleted the jobs, then failed writing its count and lost
    the "deleted N of N" line that followed on stderr (a CLI probe): that line comes first."""
    for n in range(3):
        enqueue(db_url, "fast", {"n": n})
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*PY, "delete", "--name", "fast", "--yes", db_url],
            cwd=CLI_DIR,
            env=_env(),
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    said = done.stderr.decode().splitlines()
    assert said[0].startswith("deleted 3 of 3 counted job(s)"), said
    assert said[1:] == ["monque-tui: error: cannot write stdout: No space left on device"], said
    assert done.returncode == 2 and jobs(db_url) == []
