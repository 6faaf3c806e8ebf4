"""One console measurement on a big store, in this (fresh) process: ``python -m bench.scale_console URL KEY``.

The real console (``MonqueConsole``, as ``monque-tui URL`` opens it: writable, live) runs
headless under Textual's Pilot at 160x45. Reported in milliseconds, as one JSON line:

* ``first_rows``: from creating the app to the first page of the jobs table on screen
  (opening the store included: ``app.first_paint_at``);
* ``tab_counts``: from creating the app until the status tabs hold their counts;
* ``key``: once the counts are in (a console at rest), from the key press until its screen
  shows what it is for: ``5`` the failed jobs' rows, ``e`` the error groups, ``w`` the
  Queues view's counts, ``W`` the Workers view.

One key per process, so no key finds the store's pages (or the app's caches) warmed by
another's reads; the page cache of the OS is shared by every run, as it is in production.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable

from monque_engine import JobStatus
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.console.screens.queues import QueuesScreen
from monque_tui.console.screens.table_screen import TableScreen
from monque_tui.console.screens.workers import WorkersScreen
from monque_tui.console.widgets.status_tabs import StatusTabs

KEYS = ("5", "e", "w", "W")
TIMEOUT = 120.0


def _count_loads() -> None:
    """Count each table screen's finished loads (``_loaded`` ends every ``_load``): the Queues
    and Workers views have no other sign that their first read is on screen."""
    original = TableScreen._loaded

    def loaded(self: TableScreen, next_in: float) -> None:
        self.bench_loads = getattr(self, "bench_loads", 0) + 1  # type: ignore[attr-defined]
        original(self, next_in)

    TableScreen._loaded = loaded  # type: ignore[method-assign]


async def _until(test: Callable[[], bool], what: str) -> float:
    started = time.perf_counter()
    while not test():
        if time.perf_counter() - started > TIMEOUT:
            raise TimeoutError(f"{what}: not on screen after {TIMEOUT:.0f} s")
        await asyncio.sleep(0.002)
    return time.perf_counter()


def _failed_rows(app: MonqueConsole) -> bool:
    window = app.jobs_screen.table.window
    return window is not None and window.query.status is JobStatus.FAILED and bool(window.rows)


def _screen_ready(app: MonqueConsole, kind: type) -> bool:
    screen = app.screen
    if not isinstance(screen, kind):
        return False
    if isinstance(screen, ErrorsScreen):
        return screen.fetches > 0
    return getattr(screen, "bench_loads", 0) > 0


async def measure(url: str, key: str | None) -> dict[str, float]:
    _count_loads()
    app = MonqueConsole(ConsoleConfig(url=url))
    started = app._started  # the instant the app was created: what first_paint_at counts from
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 45)) as pilot:
        await asyncio.wait_for(app.ready.wait(), TIMEOUT)
        assert app.first_paint_at is not None
        out["first_rows"] = app.first_paint_at * 1000
        tabs = app.jobs_screen.query_one(StatusTabs)
        counted = await _until(lambda: tabs.stats is not None, "tab counts")
        out["tab_counts"] = (counted - started) * 1000
        if key is not None:
            await pilot.pause()
            tests: dict[str, Callable[[], bool]] = {
                "5": lambda: _failed_rows(app),
                "e": lambda: _screen_ready(app, ErrorsScreen),
                "w": lambda: _screen_ready(app, QueuesScreen),
                "W": lambda: _screen_ready(app, WorkersScreen),
            }
            pressed = time.perf_counter()
            await pilot.press(key)
            shown = await _until(tests[key], f"key {key}")
            out[f"key {key}"] = (shown - pressed) * 1000
    return out


def main() -> None:
    url, key = sys.argv[1], sys.argv[2]
    print(json.dumps(asyncio.run(measure(url, None if key == "-" else key))), flush=True)


if __name__ == "__main__":
    main()
