"""A console on SQLite starts without ``bson``/``pymongo`` and without the screens it has not
opened (issue 40 item 7: launch to first rows within 300 ms; ``pymongo`` alone cost 170 ms
and the screens beyond the jobs table ~60 ms). Checked in a fresh interpreter: the console
module imported, the command line parsed as ``monque-tui URL`` parses it, then a SQLite
store opened and read as the console does.

Nor what only some stores or commands need: ``croniter`` with ``dateutil`` and ``zoneinfo``
(~12 ms: read on the first schedule) and ``importlib.metadata`` (~15 ms: ``--version`` only).
A module that comes back here comes back into every console's start.

Nor (issue 40, round 2: the engine's and the console's import cost) the engine's modules the
console's first rows do not use: the sync client, the cron parser, the exporter and its file
writer, the store check, the fleet's records (``fleet_records``: instances, owners,
health), the events' payloads (``event_payloads``), and ``monque_engine``'s own ``__init__`` loading them all (its names
load on first use now); nor ``hashlib``, whose import starts OpenSSL (a cursor's checksum
takes ``blake2s`` from its built-in module, an error group's key imports it on first use),
``secrets`` (it imports ``hashlib``) and ``csv``. Nor ``--serve``'s options (their parsers
and records: the command line's help needs only their names, ``serve.names``).

The filter bar's fields are not in the first frame either: tests/tui/test_filter_bar_deferred_fields.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Modules a console's start (and a first page read) must not import.
DEFERRED = (
    "monque_engine.sync",
    "monque_engine.sync.client",
    "monque_engine.guards",
    "monque_engine.cron",
    "monque_engine.export",
    "monque_engine.export_file",
    "monque_engine.export_target",
    "monque_engine.check",
    "monque_engine.fleet_records",
    "monque_engine.event_payloads",
    "hashlib",
    "_hashlib",
    "secrets",
    "csv",
    "monque_tui.serve.options",
)

SCRIPT = """
import asyncio, json, sys
DEFERRED = __DEFERRED__
import monque_tui.console.app
from monque_engine import Monque
from monque_tui.cli import entry

args = entry.parse([sys.argv[1]])
settings = entry.resolve(vars(args))

async def main(url):
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    await monque.enqueue("a", {"x": 1})
    await monque.get_jobs_with_cursor(limit=10)
    await monque.get_queue_stats()
    await monque.close()

asyncio.run(main(sys.argv[1]))
screens = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("monque_tui.console.screens."))
late = sorted(m for m in ("croniter", "dateutil", "zoneinfo", "importlib.metadata") if m in sys.modules)
deferred = sorted(m for m in DEFERRED if m in sys.modules)
print(json.dumps({"bson": "bson" in sys.modules, "pymongo": "pymongo" in sys.modules, "screens": screens, "late": late, "deferred": deferred}))
""".replace("__DEFERRED__", repr(DEFERRED))


def test_a_console_on_sqlite_imports_no_bson_only_the_jobs_screen_and_nothing_late(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    result = subprocess.run([sys.executable, "-c", SCRIPT, url], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"bson": False, "pymongo": False, "screens": ["jobs"], "late": [], "deferred": []}, report
