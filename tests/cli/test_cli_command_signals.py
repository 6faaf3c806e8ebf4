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
