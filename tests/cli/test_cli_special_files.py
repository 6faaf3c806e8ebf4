"""Devices, FIFOs and symlinks on the command line (probe finding: ``export`` replaced ``/dev/null``).

``export --output`` replaces only regular files, and a store URL naming a FIFO is refused at
once instead of blocking the URL check (the engine's side: ``tests/test_sqlite_special_files.py``).

An export is written to ``FILE.partial-PID`` and renamed over ``FILE`` when complete, so a
failure never leaves half a file. Renamed over a device, that replaced the device itself:
``monque-tui export --output /dev/null``, run as root, left a regular file at
``/dev/null`` and broke every program on the machine that wrote to it (tmux among them).
Now a device or FIFO is written in place, a symlink is followed (the link stays, the file
it names is replaced) and a replaced file keeps its permission bits. Real processes; the
device is a copy of ``/dev/null``'s node made in the test's own directory, never the real one.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from cli_helpers import enqueue
from test_cli_fleet import cli


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as fifo:
            into.append(fifo.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path: Path, db_url: str) -> None:
    job_id = enqueue(db_url, "fast", {"n": 1})
    fifo = tmp_path / "jobs.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = _read_fifo(fifo, received)
    done = cli("export", "--output", str(fifo), "--url", db_url)
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and job_id.encode() in received[0]
    assert sorted(p.name for p in tmp_path.iterdir() if ".partial-" in p.name) == []


def test_a_character_device_is_written_in_place_and_stays_a_device(tmp_path: Path, db_url: str) -> None:
    enqueue(db_url, "fast", {"n": 1})
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the /dev/null device, another node
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD (the FIFO test covers the same path)")
    done = cli("export", "--output", str(null), "--url", db_url)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode), "the export replaced the device with a file"
    assert "exported 1 job(s)" in done.stderr


def test_a_symlink_stays_and_the_file_it_names_is_replaced_keeping_its_mode(tmp_path: Path, db_url: str) -> None:
    job_id = enqueue(db_url, "fast", {"n": 1})
    real = tmp_path / "exports" / "jobs.jsonl"
    real.parent.mkdir()
    real.write_text("yesterday\n")
    real.chmod(0o600)
    link = tmp_path / "latest.jsonl"
    link.symlink_to(real)
    done = cli("export", "--output", str(link), "--url", db_url)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert job_id in real.read_text() and "yesterday" not in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    # A link to a file not there yet: the file is made where the link points.
    dangling = tmp_path / "next.jsonl"
    dangling.symlink_to(tmp_path / "exports" / "next.jsonl")
    assert cli("export", "--output", str(dangling), "--url", db_url).returncode == 0
    assert dangling.is_symlink() and job_id in (tmp_path / "exports" / "next.jsonl").read_text()


def test_a_store_url_naming_a_fifo_exits_3_at_once_for_the_console_and_commands(tmp_path: Path) -> None:
    """The CLI's own URL check opened the path to read SQLite's header: on a FIFO that blocked for ever."""
    fifo = tmp_path / "jobs.db"
    os.mkfifo(fifo)
    url = f"sqlite:///{fifo}"
    for argv in (("paused", "--url", url), (url,)):
        done = cli(*argv, timeout=30)
        assert done.returncode == 3, done.stderr
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in line, line
        assert "is a named pipe (FIFO), not a file" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.db"]


def test_a_store_path_too_long_for_the_os_exits_2_in_one_line(tmp_path: Path) -> None:
    """It was ``internal error: OSError: [Errno 36] File name too long: '<the whole path>'``, exit 1."""
    url = f"sqlite:///{tmp_path}/{'a' * 300}.db"
    for argv in (("paused", "--url", url), (url,)):
        done = cli(*argv, timeout=30)
        assert done.returncode == 2, done.stderr
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1 and "internal error" not in line, line
        assert "file systems allow 255 per name" in line and "a" * 300 not in line, line
