"""``monque-tui URL`` with a clock on each phase of its start, up to the first rows on screen.

Run by ``bench.console_launch --phases`` in tmux, as the command itself (``cli.main``, so
whatever it does first happens here too), in a fresh interpreter of the tree under test. The
console's classes are wrapped as their module finishes importing, by method names every tree
since issue 40 has (``MonqueConsole.__init__ / on_mount / first_paint / _display``,
``ConsoleSession.open / load_top``), so an older tree is timed the same way. Once the first
frame with rows is written, the marks go as JSON to ``$MONQUE_BENCH_PHASES`` and the process
ends at once (``os._exit``: nothing after the first rows is measured).

Marks, in seconds since this script's first line (``started`` is how long the process had
run by then: the interpreter's own start, at the kernel's 10 ms tick):
``imported`` (the console's app module), ``app_built``, ``mounted``, ``opened`` (the store),
``first_page`` (``load_top`` done), ``first_frame`` (any frame handed to the writer),
``rows_frame`` (the frame in which the table drew its first row), and ``cpu`` (the process's
CPU seconds then).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

T0 = time.perf_counter()
TICKS = os.sysconf("SC_CLK_TCK")
marks: dict[str, float] = {}


def _process_age() -> float:
    start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    return float(Path("/proc/uptime").read_text().split()[0]) - start_ticks / TICKS


STARTED = _process_age()


def mark(name: str) -> None:
    marks.setdefault(name, time.perf_counter() - T0)


#: The last frame handed to the writer thread: (seconds since T0, process CPU seconds then).
last_frame: list[tuple[float, float]] = []


def _finish() -> None:
    """The table has drawn its first row: the frame holding it was the last one written
    (the row is drawn while that frame is composed, and told of after it is handed over)."""
    marks["rows_frame"], marks["cpu"] = (
        last_frame[-1] if last_frame else (time.perf_counter() - T0, time.process_time())
    )
    marks["started"] = STARTED
    Path(os.environ["MONQUE_BENCH_PHASES"]).write_text(json.dumps(marks))
    os._exit(0)


def _wrap(cls: Any, name: str, after: str) -> None:
    original = getattr(cls, name)

    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        mark(after)
        return result

    setattr(cls, name, wrapped)


def _wrap_async(cls: Any, name: str, after: str) -> None:
    original = getattr(cls, name)

    async def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = await original(self, *args, **kwargs)
        mark(after)
        return result

    setattr(cls, name, wrapped)


def _instrument_app(module: ModuleType) -> None:
    mark("imported")
    app_class = module.MonqueConsole
    _wrap(app_class, "__init__", "app_built")
    on_mount = app_class.on_mount

    def _on_mount(self: Any) -> Any:  # no event parameter: Textual passes what a handler asks for
        mark("mounted")
        return on_mount(self)

    app_class.on_mount = _on_mount
    first_paint = app_class.first_paint

    def _first_paint(self: Any) -> None:
        first_paint(self)
        _finish()

    app_class.first_paint = _first_paint
    display = app_class._display

    def _display(self: Any, screen: Any, renderable: Any) -> None:
        display(self, screen, renderable)
        if renderable is not None:
            mark("first_frame")
            last_frame.append((time.perf_counter() - T0, time.process_time()))

    app_class._display = _display
    session = sys.modules.get("monque_tui.console.session.core")
    if session is not None:
        _wrap_async(session.ConsoleSession, "open", "opened")
        _wrap_async(session.ConsoleSession, "load_top", "first_page")


class _AfterImport(importlib.abc.MetaPathFinder):
    """Instrument ``monque_tui.console.app`` the moment its module has run."""

    TARGET = "monque_tui.console.app"

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != self.TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        assert spec is not None and spec.loader is not None
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _instrument_app(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def main() -> None:
    sys.meta_path.insert(0, _AfterImport())
    from monque_tui.cli import main as command

    sys.exit(command(sys.argv[1:]))


if __name__ == "__main__":
    main()
