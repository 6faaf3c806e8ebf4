"""Launch the console: ``run_console(ConsoleConfig(url=...))`` returns the process exit code."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from ..common.exitcodes import CliError, ExitCode
from ..common.streams import write_stderr
from .app import MonqueConsole
from .config import ConsoleConfig


def _is_terminal(stream: TextIO | None) -> bool:
    """A closed or missing stream (``<&-``) is not a terminal, and must not raise here."""
    try:
        return stream is not None and not stream.closed and stream.isatty()
    except (OSError, ValueError):
        return False


def require_terminal() -> None:
    """Refuse to start without a terminal on stdin and stdout, or with stderr closed.

    Without one Textual never gets a key (stdin from /dev/null: the console hung forever)
    or dies inside its driver (stdin closed: a traceback). Textual draws on stderr: with
    ``2>&-`` the console hung blank and ignored q and ctrl+c (probe 7). Say so in one line
    instead (lost, if stderr is closed: the exit code still says it). A stderr redirected to
    a file is fine: ``_screen_on_the_terminal`` draws on stdout meanwhile.
    """
    for label, stream in (("stdin", sys.__stdin__), ("stdout", sys.__stdout__)):
        if not _is_terminal(stream):
            raise CliError(
                f"the console needs a terminal, but {label} is {_state(stream)}; run it in a terminal, "
                "or use --worker or --demo --headless for a process without a UI",
                ExitCode.USAGE,
            )
    if _state(sys.__stderr__) == "closed":
        raise CliError(
            "the console needs stderr open (it draws there); drop 2>&- or redirect it to a file",
            ExitCode.USAGE,
        )


def _state(stream: TextIO | None) -> str:
    return "closed" if stream is None or getattr(stream, "closed", False) else "not a terminal"


@contextlib.contextmanager
def _screen_on_the_terminal() -> Iterator[None]:
    """With stderr redirected (``monque-tui 2>console.log``), draw on the terminal anyway.

    Textual writes the screen to stderr, so the redirect got the escape codes and the terminal
    stayed blank (probe 7). For the console's life descriptor 2 is the terminal on stdout;
    afterwards it is the redirect again, so the closing line (an error) lands where asked.
    """
    stderr = sys.__stderr__
    if stderr is None or _is_terminal(stderr):
        yield
        return
    stderr.flush()
    saved = os.dup(2)
    os.dup2(sys.__stdout__.fileno(), 2)  # type: ignore[union-attr]
    try:
        yield
    finally:
        stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


#: What textual-serve sets for each browser session (``monque-tui --serve``): Textual then talks
#: to the server over stdin and stdout in packets, and there is no terminal to require.
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"


def served_to_a_browser() -> bool:
    return os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER


def run_console(config: ConsoleConfig, *, terminal_required: bool = True) -> int:
    """Build and run the app; a store that cannot be opened is one line on stderr and exit code 3 (4: the --app).

    ``terminal_required=False`` is for tests that run the app headless on purpose, and for a
    session of ``--serve`` (Textual's web driver: stdin and stdout are the server's pipes).
    """
    if served_to_a_browser():
        terminal_required = False
    if terminal_required:
        require_terminal()
    app = MonqueConsole(config, freeze_heap=True)
    with _screen_on_the_terminal() if terminal_required else contextlib.nullcontext():
        asyncio.run(_open_then_run(app))
    if app.error:
        write_stderr(app.error)
        return app.return_code or 1
    return app.return_code or 0


#: Signals that close the console as ``q`` does. Textual's terminal driver handles none of them,
#: so SIGTERM (``kill``, a supervisor) and SIGHUP (the terminal or ssh session closed) killed the
#: process on the spot: with ``--app`` or ``--demo`` its running jobs stayed ``processing`` until
#: ``lock_timeout`` and its instance record stayed behind. SIGINT is Textual's (ctrl+c is a key).
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


#: How long the launch waits for the store to open before starting Textual anyway (seconds):
#: a local SQLite file opens in a few milliseconds, well within it.
OPEN_HEAD_START_S = 0.25
#: After the first exit signal, time for the workers' shutdown timeout and this much more.
FORCED_EXIT_MARGIN_S = 10.0
#: After a signalled quit has closed the session (jobs finished, store closed), time left
#: for Textual to restore the terminal before the process ends anyway (exit code 0).
TEARDOWN_GRACE_S = 5.0


def _grace_seconds(app: MonqueConsole) -> float:
    timeout = app.config.monque_options.get("shutdown_timeout", 30.0)
    return float(timeout) + FORCED_EXIT_MARGIN_S


def _hard_exit(sig: int, _frame: object) -> None:
    os._exit(ExitCode.FORCED_BASE + sig)


def _arm_forced_exit(sig: int, after_s: float) -> None:
    """Make sure a signalled console ends even if its shutdown blocks the event loop.

    The loop's own handlers only run while the loop turns. With the terminal gone (ssh
    dropped, tmux killed) Textual's shutdown could block the loop for good waiting on its
    output thread, so the second signal was never seen and the process stayed behind.
    From the first signal on, a second one is handled at the interpreter level (it runs
    even in a blocked lock wait), and a watchdog ends the process once the workers'
    shutdown timeout has been given in full.
    """
    for each in EXIT_SIGNALS:
        signal.signal(each, _hard_exit)

    def watchdog() -> None:
        time.sleep(after_s)
        os._exit(ExitCode.FORCED_BASE + sig)

    threading.Thread(target=watchdog, name="monque-forced-exit", daemon=True).start()


def _leave_after_teardown_grace() -> None:
    """The session is closed: everything the quit promised is done. With the terminal gone
    (tmux killed, ssh dropped), Textual's teardown can still block for good writing its
    last escape codes to an output thread whose queue nobody drains (seen about once in 12
    closed terminals), and the process stayed until the forced exit, 40 s later."""

    def watchdog() -> None:
        time.sleep(TEARDOWN_GRACE_S)
        os._exit(ExitCode.OK)

    threading.Thread(target=watchdog, name="monque-teardown-exit", daemon=True).start()


async def _open_then_run(app: MonqueConsole) -> None:
    """Start opening the store, give it a head start, then run the app (issue 40: launch to
    first rows). A local file is open and its first page read within the head start, so the
    first frame holds rows; a slow store (a MongoDB server far away) goes on opening in the
    background while the console draws, as it always did."""
    opening = app.start_opening()
    await asyncio.wait({opening}, timeout=OPEN_HEAD_START_S)
    try:
        await _run_until_signalled(app)
    finally:
        if not opening.done():
            opening.cancel()  # the app ended before it could use it (as its connect worker would be)
        app.opening_failed()  # seen: no "exception was never retrieved" at exit


async def _run_until_signalled(app: MonqueConsole) -> None:
    """Run the app; the first exit signal quits it cleanly (workers stop, the store closes),
    a second one exits at once with 128 + its number, as the worker mode does."""
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def on_signal(sig: int) -> None:
        received.append(sig)
        if len(received) > 1:
            os._exit(ExitCode.FORCED_BASE + sig)
        _arm_forced_exit(sig, _grace_seconds(app))
        app.after_close = _leave_after_teardown_grace
        app.exit()

    installed = []
    for sig in EXIT_SIGNALS:
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - not Unix, or not the main thread
            pass
    try:
        await app.run_async()
    finally:
        for sig in installed:
            if not received:  # after a signal the interpreter-level handlers stay (see _arm_forced_exit)
                loop.remove_signal_handler(sig)
