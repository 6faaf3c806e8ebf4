"""A command stopped by a signal cleans up and says so in one line (probe 5).

`monque-tui export --output FILE` killed by SIGTERM (a supervisor, `timeout`) or SIGHUP (its
terminal closed) left `FILE.partial-PID` behind and ended without a word; ctrl+c ended it
silently with 130. Each now cancels the export, removes the partial file, prints one line
naming the signal and the file not written, and exits 128 + the signal.

Synchronisation: the process is stopped (SIGSTOP) once its first progress line is out, the
signal is queued while it is stopped, and SIGCONT delivers it with ~19,000 jobs still to go.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import CliProcess

from monque_engine import Monque

JOBS = 20_000


async def _seed(url: str) -> None:
    async with Monque(url, recover_stale_jobs=False) as monque:
        for start in range(0, JOBS, 1000):
            await monque.enqueue_many([{"name": "report", "data": {"n": n}} for n in range(start, start + 1000)])


@pytest.mark.parametrize(
    ("sig", "word"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP"), (signal.SIGINT, "ctrl+c")]
)
def test_a_signal_stops_an_export_without_leaving_a_partial_file(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path, sig: signal.Signals, word: str
) -> None:
    asyncio.run(_seed(db_url))
    target = tmp_path / "out.jsonl"
    export = spawn("export", "--output", str(target), "--url", db_url)
    export.wait_for_line(lambda line: line.startswith("exported ") and f"/{JOBS}" in line)
    export.send(signal.SIGSTOP)
    export.send(sig)
    export.send(signal.SIGCONT)
    code = export.wait_exit()
    assert code == 128 + sig, export.stderr
    errors = [line for line in export.lines if line.startswith("monque-tui: error:")]
    assert errors == [f"monque-tui: error: stopped by {word} before export finished; {target} was not written"], (
        export.stderr
    )
    assert "Traceback" not in export.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out.jsonl")) == []


def test_an_earlier_export_survives_a_stopped_one(
    spawn: Callable[..., CliProcess], db_url: str, tmp_path: Path
) -> None:
    asyncio.run(_seed(db_url))
    target = tmp_path / "out.jsonl"
    target.write_text("earlier\n")
    export = spawn("export", "--output", str(target), "--url", db_url)
    export.wait_for_line(lambda line: line.startswith("exported ") and f"/{JOBS}" in line)
    export.send(signal.SIGSTOP)
    export.send(signal.SIGTERM)
    export.send(signal.SIGCONT)
    assert export.wait_exit() == 143
    assert "(the earlier file is unchanged)" in export.stderr
    assert target.read_text() == "earlier\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out.jsonl")] == ["out.jsonl"]


@pytest.mark.parametrize(("sig", "word"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "ctrl+c")])
def test_a_bulk_action_stopped_part_way_says_how_far_it_got(
    spawn: Callable[..., CliProcess], db_url: str, sig: signal.Signals, word: str
) -> None:
    """``delete --all --yes`` commits 1,000 jobs a transaction: stopped part way, it said only
    "stopped before delete finished" while half the jobs were gone (probe-cli). The line now
    says how many of the counted jobs are no longer left, which the store bears out."""
    import re
    import sqlite3

    asyncio.run(_seed(db_url))
    path = db_url.removeprefix("sqlite:///")

    def left() -> int:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT count(*) FROM monque_jobs").fetchone()[0])

    delete = spawn("delete", "--all", "--yes", "--url", db_url)
    while left() == JOBS:  # its first chunk committed (the file is polled, not slept on)
        assert delete.proc.poll() is None, delete.stderr
    delete.send(signal.SIGSTOP)
    delete.send(sig)
    delete.send(signal.SIGCONT)
    assert delete.wait_exit() == 128 + sig, delete.stderr
    (line,) = [line for line in delete.lines if line.startswith("monque-tui: error:")]
    said = re.fullmatch(
        rf"monque-tui: error: stopped by {re.escape(word)} before delete finished; at least ([\d,]+) of the 20,000 counted "
        r"job\(s\) were deleted before it stopped: run it again for the rest",
        line,
    )
    assert said is not None, line
    reached = int(said.group(1).replace(",", ""))
    assert 0 < reached <= JOBS - left() < JOBS, (reached, left())
    assert "Traceback" not in delete.stderr
