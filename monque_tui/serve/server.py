"""textual-serve's server, behind the token gate, with a session limit and session logs.

Each websocket is one browser session and runs one console process (``python -m monque_tui``
under Textual's web driver), started when the page connects and stopped when it goes. The
process gets the store URL and settings through its environment, never its argv (``ps``
shows argv; a MongoDB URL may hold a password), and never the token.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import shlex
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from monque_engine.management import ManagementApi
from monque_engine.store.urls import mask_secrets, mask_url

from ..common.exitcodes import STOP_SIGNALS, CliError, ExitCode
from .api import add_api_routes, close_api, open_api
from .auth import Session, TokenGate, describe_peer, security_headers
from .badrequests import quiet_bad_requests
from .names import TOKEN_ENV, TOKEN_FILE_ENV
from .options import ServeConfig, plain_http_warning

log = logging.getLogger("monque_tui.serve")

#: Never handed to a session's console: the token, and settings that would make the console
#: start workers (``--serve`` serves a console; run workers with ``--worker``).
DROPPED_FROM_SESSIONS = (TOKEN_ENV, TOKEN_FILE_ENV, "MONQUE_APP")
#: Seconds a session's console gets to quit when its page goes, before it is killed.
STOP_TIMEOUT = 5.0
#: A browser asks for its terminal size; anything beyond this is not a screen.
MAX_CELLS = 1000
#: Close codes the page shows the reason of (templates/app_index.html): "try again later"
#: (the session limit), and the application's own for a login that ended.
CLOSE_TRY_LATER = 1013
CLOSE_LOGGED_OUT = 4001
CLOSE_EXPIRED = 4002
TEMPLATES = Path(__file__).resolve().parent / "templates"


class SessionConsole(AppService):
    """One session's console process, with the environment ``ServeConfig`` prescribes."""

    def __init__(self, *args: Any, overrides: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._overrides = overrides

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width=width, height=height)
        for name in DROPPED_FROM_SESSIONS:
            environment.pop(name, None)
        environment.update(self._overrides)
        return environment

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def kill(self) -> None:
        if self._process is not None and self._process.returncode is None:
            try:
                self._process.kill()
            except ProcessLookupError:
                pass


class ConsoleServer(Server):
    """textual-serve's ``Server`` with the gate, the limit and the logs; started by ``serve()``."""

    def __init__(
        self, config: ServeConfig, public_url: str, *, canonical_host: bool, api: ManagementApi | None = None
    ) -> None:
        command = f"exec {shlex.quote(sys.executable)} -m monque_tui"
        super().__init__(
            command,
            host=config.address.host,
            port=config.address.port,
            title="monque-tui" + (" (read-only)" if config.read_only else ""),
            public_url=public_url,
            templates_path=TEMPLATES,
        )
        self.config = config
        self.gate = TokenGate(
            config.token.value,
            public_url,
            canonical_host=canonical_host,
            session_lifetime=config.session_lifetime,
            on_logout=self._logged_out,
        )
        self._sessions: dict[int, web.WebSocketResponse] = {}
        #: Each console's login (None: a script's Bearer token), to close them at logout.
        self._logins: dict[int, Session | None] = {}
        self._numbers = itertools.count(1)
        self._closing: set[asyncio.Task[Any]] = set()
        #: The management API (``/api/...``), over this process's own Monque; None: not served.
        self.api = api

    def _close_later(self, websocket: web.WebSocketResponse, code: int, reason: str) -> None:
        task = asyncio.get_running_loop().create_task(websocket.close(code=code, message=reason.encode()))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _logged_out(self, session: Session) -> None:
        """A logout closes the consoles that login opened, in every tab."""
        for number, login in list(self._logins.items()):
            if login is session and number in self._sessions:
                self._close_later(self._sessions[number], CLOSE_LOGGED_OUT, "You logged out. Reload to log in again.")

    def initialize_logging(self) -> None:
        """Logging is ``configure_logging``'s (set up by ``serve``), as in every other mode."""

    async def on_startup(self, app: web.Application) -> None:
        """No logo: ``serve`` prints its own lines once the socket is bound."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every session's websocket, so each handler stops its console process."""
        await asyncio.gather(
            *(
                websocket.close(code=1001, message=b"The server is shutting down.")
                for websocket in self._sessions.values()
            ),
            return_exceptions=True,
        )

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.gate.middleware)
        app.on_response_prepare.append(security_headers)
        if self.api is not None:
            add_api_routes(app, self.api, self.gate.origin)
        return app

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One session: refused when ``max_sessions`` are open, otherwise a console process until the page goes."""
        peer = describe_peer(request)
        limit = self.config.max_sessions
        if len(self._sessions) >= limit:
            log.warning("session refused for %s: all %d sessions are in use (--max-sessions)", peer, limit)
            return await self._refuse(request, limit)
        number = next(self._numbers)
        websocket = web.WebSocketResponse(heartbeat=15)
        self._sessions[number] = websocket  # counted before the first await: no race past the limit
        login: Session | None = request.get("monque_session")
        self._logins[number] = login
        expiry = None
        if login is not None:  # the console ends with the login that opened it
            expiry = asyncio.get_running_loop().call_later(
                self.gate.sessions.remaining(login),
                self._close_later,
                websocket,
                CLOSE_EXPIRED,
                "Your login expired. Reload to log in again.",
            )
        width = min(max(to_int(request.query.get("width", "80"), 80), 1), MAX_CELLS)
        height = min(max(to_int(request.query.get("height", "24"), 24), 1), MAX_CELLS)
        started = time.monotonic()
        console: SessionConsole | None = None
        try:
            await websocket.prepare(request)
            console = SessionConsole(
                self.command,
                overrides=self.config.child_environment,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
            )
            await console.start(width, height)
            log.info(
                "session %d opened for %s: console pid %s (%d of %d sessions in use)",
                number,
                peer,
                console.pid,
                len(self._sessions),
                limit,
            )
            await self._process_messages(websocket, console)
        except Exception as error:  # noqa: BLE001 - one session's fault must not stop the server
            log.warning("session %d for %s ended on an error: %s: %s", number, peer, type(error).__name__, error)
        finally:
            del self._sessions[number]
            del self._logins[number]
            if expiry is not None:
                expiry.cancel()
            if console is not None:
                await self._stop(console)
            if not websocket.closed:
                await websocket.close()
            log.info(
                "session %d closed for %s after %.0f s (%d of %d sessions in use)",
                number,
                peer,
                time.monotonic() - started,
                len(self._sessions),
                limit,
            )
        return websocket

    @staticmethod
    async def _refuse(request: web.Request, limit: int) -> web.WebSocketResponse:
        """Past the limit: no console, but the page is told why (a refused handshake shows a
        browser nothing but a closed socket), in the close frame's reason."""
        websocket = web.WebSocketResponse()
        await websocket.prepare(request)
        reason = f"All {limit} console sessions are in use (--max-sessions {limit}). Close one, then Restart."
        await websocket.close(code=CLOSE_TRY_LATER, message=reason.encode())
        return websocket

    @staticmethod
    async def _stop(console: SessionConsole) -> None:
        """Ask the console to quit; kill it if it has not within ``STOP_TIMEOUT``."""
        try:
            await asyncio.wait_for(console.stop(), STOP_TIMEOUT)
        except asyncio.CancelledError:
            console.kill()
            raise
        except Exception:  # noqa: BLE001 - a timeout or a broken pipe: the process goes either way
            console.kill()


def _bind(config: ServeConfig) -> socket.socket:
    host, port = config.address.host, config.address.port
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as error:
        raise CliError(
            f"--serve {config.address.url().removeprefix('http://')}: cannot listen there: {error.strerror or error}",
            ExitCode.USAGE,
        ) from None


def serve(config: ServeConfig) -> int:
    """Serve until SIGINT, SIGTERM or SIGHUP; every session's console is stopped on the way out."""
    listener = _bind(config)
    port = listener.getsockname()[1]
    public_url = config.public_url or config.address.url(port)
    os.environ.pop(TOKEN_ENV, None)  # out of this process's environment: nothing else needs it
    warning = plain_http_warning(public_url)
    if warning is not None:
        print(f"monque-tui: {warning}", file=sys.stderr, flush=True)
    return asyncio.run(_serve(config, listener, public_url))


async def _serve(config: ServeConfig, listener: socket.socket, public_url: str) -> int:
    api = None
    if config.store_url:
        try:
            api = await open_api(config.store_url, config.monque_options, read_only=config.read_only)
        except Exception as error:  # noqa: BLE001 - one line for the operator, as the console says it
            print(
                f"monque-tui: cannot open {mask_url(config.store_url)} for the management API: "
                f"{mask_secrets(str(error), config.store_url)}",
                file=sys.stderr,
                flush=True,
            )
            return ExitCode.STORE
    try:
        return await _serve_app(config, listener, public_url, api)
    finally:
        if api is not None:
            await close_api(api)


async def _serve_app(config: ServeConfig, listener: socket.socket, public_url: str, api: ManagementApi | None) -> int:
    server = ConsoleServer(config, public_url, canonical_host=config.public_url is None, api=api)
    quiet_bad_requests()
    app = await server._make_app()
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=STOP_TIMEOUT + 1)
    await runner.setup()
    await web.SockSite(runner, listener).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, _new_link, server)
    _announce(config, public_url, server.gate.login_link())
    try:
        await stop.wait()
    finally:
        log.info("stopping: closing %d session(s)", len(server._sessions))
        await runner.cleanup()
    return ExitCode.OK


def _new_link(server: ConsoleServer) -> None:
    """SIGUSR1: a new one-time login link (the old one, used or not, no longer logs in)."""
    print(f"monque-tui: new one-time login link: {server.gate.login_link()}", flush=True)


def _lifetime(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _announce(config: ServeConfig, public_url: str, link: str) -> None:
    """The lines an operator needs, on stdout; never the token."""
    mode = "read-only console" if config.read_only else "console (it can cancel, retry and delete jobs)"
    lines = [
        f"monque-tui: serving the {mode} on {public_url}/",
        f"monque-tui: at most {config.max_sessions} sessions at once; each runs its own console process",
        f"monque-tui: log in once with {link}",
        f"monque-tui: (the link works once; kill -USR1 {os.getpid()} prints a new one; "
        f"a login lasts {_lifetime(config.session_lifetime)})",
    ]
    if config.token.generated:
        lines.append(
            f"monque-tui: (a new token for this run, never shown; for Authorization: Bearer in scripts, or the form at "
            f"{public_url}/login, set {TOKEN_ENV} or {TOKEN_FILE_ENV})"
        )
    else:
        lines.append(f"monque-tui: the token from {config.token.source} logs in at {public_url}/login, or as Bearer")
    if config.store_url:
        writes = "reads only: every write answers 403" if config.read_only else "reads and writes"
        lines.append(
            f"monque-tui: management API at {public_url}/api/v1 and {public_url}/api/x/v1 ({writes}; "
            f"Authorization: Bearer TOKEN, or the login's cookie; document at {public_url}/api/x/v1/openapi.json)"
        )
    lines.append("monque-tui: Ctrl+C stops the server and every session")
    print("\n".join(lines), flush=True)
