"""``monque-tui``: one command, three ways to run it.

    monque-tui [URL]                                   the console
    monque-tui --worker --app PACKAGE.MODULE:ATTR [URL] a headless processor pool
    monque-tui --demo [URL] [--headless]               a living demo queue
    monque-tui --serve [HOST:]PORT [URL]               the console in browsers, behind a token

Configuration comes from flags, then ``MONQUE_*`` environment variables, then defaults
(``settings.OPTIONS`` is the one table of them). User errors end as one line on stderr and
an exit code from ``exitcodes.ExitCode``; tracebacks are for bugs, and only with
``--log-level debug``. Textual is imported only on the console path, so the worker runs
on machines (and in containers) where the console never will.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from monque_engine import __version__ as engine_version
from monque_engine.store.urls import mask_secrets, mask_text, mask_url

from ..common.exitcodes import CliError, ExitCode
from ..common.streams import is_open, print_help_text, write_stderr
from ..serve.options import (
    DEFAULT_MAX_SESSIONS,
    SESSION_LIFETIME_ENV,
    TOKEN_ENV,
    TOKEN_FILE_ENV,
    parse_address,
    parse_public_url,
    parse_session_lifetime,
)
from .commands import COMMANDS
from .commands import describe as describe_commands
from .listen_checks import METRICS_ONLY, metrics_options, reject_unused_allow_remote
from .settings import DEMO_URL, OPTIONS, Resolved, parse_positive_int, resolve

PROG = "monque-tui"

EXAMPLES = """\
examples:
  monque-tui --demo                         a demo queue with live workers, in the console
  monque-tui --demo --headless --duration 10  the same demo without the console UI
  monque-tui                                the console on sqlite:///monque.db
  monque-tui sqlite:///var/lib/app/jobs.db  the console on another SQLite file
  monque-tui --read-only mongodb://db1,db2,db3/app?replicaSet=rs0   look, don't touch
  monque-tui --worker --app myapp.tasks:monque            run the handlers of your Monque
  monque-tui --worker --app myapp.tasks:setup --concurrency 20 sqlite:///jobs.db
  monque-tui --worker --app myapp.tasks:setup --log-format json   for log collectors
  monque-tui --app myapp.tasks:setup sqlite:///jobs.db    the console, workers in-process
  MONQUE_URL=sqlite:///jobs.db MONQUE_APP=myapp.tasks:setup monque-tui --worker
  monque-tui --serve 8080 --read-only sqlite:///jobs.db   the console in a browser (prints a login link)

--app PACKAGE.MODULE:ATTR names either a Monque instance with handlers registered, or a
function (sync or async) taking a Monque and registering handlers on it, e.g.

  def setup(monque):
      monque.register("email.send", send_email)

Every option can also be set in the environment (shown as [env: ...]); a flag beats the
environment, which beats the default. The URL comes from MONQUE_URL, except with --demo,
which uses its own file unless a URL is given on the command line. Modes (--worker,
--demo, --headless) are flags only.

The worker stops gracefully on SIGINT/SIGTERM/SIGHUP (in-flight jobs get --shutdown-timeout to
finish); a second signal exits at once and leaves them for stale recovery. It also stops, with
exit code 3, if its SQLite file is deleted or replaced while it runs (start it again to open
the file now at that path), or is found damaged (check it and restore a backup).

exit codes:
  0  clean stop                       3  the store cannot be opened or reached
  1  internal error (a bug)           4  the --app cannot be loaded or has no handlers
  2  bad flag, env value or URL       5  shutdown timed out; jobs left for stale recovery
  129/130/143  forced exit by a second SIGHUP/SIGINT/SIGTERM (commands: the first)
  141  stdout's reader went away (e.g. monque-tui export | head)
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and goes through the same path as ours."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see {PROG} --help)", ExitCode.USAGE)

    def _print_message(self, message: str, file: Any = None) -> None:
        print_help_text(message, file)


def _flag_type(parse: Any) -> Any:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def version_text() -> str:
    try:
        from importlib.metadata import version

        own = version("monque-tui")
    except Exception:  # noqa: BLE001 - not installed as a distribution (e.g. run from a checkout)
        own = engine_version
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"{PROG} {own} (monque_engine {engine_version}, Python {python})"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=textwrap.dedent("""\
            A terminal console and headless worker for Monque job queues (SQLite or MongoDB).
            Watch jobs live, and cancel, retry, reschedule or delete them; or run the
            processor pool of your handlers without a UI."""),
        epilog=EXAMPLES + "\n" + describe_commands(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "url",
        nargs="?",
        metavar="URL",
        default=None,
        help="store URL: sqlite:///relative.db, sqlite:////absolute/path.db, mongodb://host/db "
        "or mongodb+srv://... [env: MONQUE_URL] [default: sqlite:///monque.db; "
        f"--demo: {DEMO_URL}]",
    )
    modes = parser.add_argument_group("modes (the console is the default)")
    exclusive = modes.add_mutually_exclusive_group()
    exclusive.add_argument(
        "--worker",
        action="store_true",
        help="run the --app's handlers headless until SIGINT/SIGTERM/SIGHUP (no UI, no Textual)",
    )
    exclusive.add_argument(
        "--demo",
        action="store_true",
        help="demo handlers and a stream of demo jobs on a local SQLite file, in the console",
    )
    exclusive.add_argument(
        "--serve",
        metavar="[HOST:]PORT",
        type=_flag_type(parse_address),
        default=None,
        help="serve the console to browsers on HOST:PORT (HOST defaults to 127.0.0.1); every request needs "
        f"the token (printed at start, or from {TOKEN_ENV} or {TOKEN_FILE_ENV}); needs monque-tui[serve]",
    )
    modes.add_argument(
        "--headless", action="store_true", help="with --demo: run the demo without the console, printing progress lines"
    )
    modes.add_argument("--version", action="version", version=version_text())
    serving = parser.add_argument_group("with --serve (the token is never a flag: ps would show it)")
    serving.add_argument(
        "--public-url",
        metavar="URL",
        type=_flag_type(parse_public_url),
        default=None,
        help="the origin browsers use, behind a reverse proxy (e.g. https://jobs.example.com) "
        "[default: http://HOST:PORT]",
    )
    serving.add_argument(
        "--max-sessions",
        metavar="N",
        type=_flag_type(parse_positive_int),
        default=None,
        help=f"browser sessions at once; each runs a console process [default: {DEFAULT_MAX_SESSIONS}]",
    )
    serving.add_argument(
        "--session-lifetime",
        metavar="DURATION",
        type=_flag_type(parse_session_lifetime),
        default=None,
        help=f"how long a browser's login lasts, e.g. 30m, 12h, 7d [env: {SESSION_LIFETIME_ENV}; default: 12h]",
    )
    serving.add_argument(
        "--token-file",
        metavar="PATH",
        default=None,
        help=f"read the token from the first line of PATH [env: {TOKEN_FILE_ENV}; or the token itself in "
        f"{TOKEN_ENV}; default: a new one, printed]",
    )
    # Refused with its own message, or argparse would read `--token X` as `--token-file X`.
    serving.add_argument("--token", dest="token_flag", default=None, help=argparse.SUPPRESS)
    options = parser.add_argument_group("settings (each also from an environment variable)")
    for option in OPTIONS:
        help_text = f"{option.help} [env: {option.env}]"
        if option.is_switch:
            options.add_argument(option.flag, dest=option.dest, action="store_true", default=False, help=help_text)
        else:
            options.add_argument(
                option.flag,
                dest=option.dest,
                type=_flag_type(option.parse),
                default=None,
                metavar=option.metavar,
                help=help_text,
            )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``monque-tui`` console script; returns the process exit code."""
    debug = False
    try:
        words = list(argv) if argv is not None else sys.argv[1:]
        if words and words[0] in COMMANDS:  # pause, resume, paused, instances, release-dead, health, export
            from .commands import run_command

            try:
                return run_command(words)
            except SystemExit as exit_:  # COMMAND --help
                return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
        parser = build_parser()
        try:
            args = parser.parse_args(list(argv) if argv is not None else None)
        except SystemExit as exit_:  # --help and --version
            return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
        settings = resolve(vars(args))
        debug = settings["log_level"] == "debug"
        return _dispatch(args, settings)
    except CliError as error:
        _print_error(error.message)
        return error.code
    except KeyboardInterrupt:
        return ExitCode.FORCED_BASE + 2
    except BrokenPipeError:
        # The reader of stdout went away (`monque-tui export | head`): not a bug, and nobody to tell.
        _detach_stdout()
        return ExitCode.BROKEN_PIPE
    except Exception as error:  # noqa: BLE001 - a bug: say so in one line, traceback on request
        url = os.environ.get("MONQUE_URL", "")
        _print_error(
            mask_secrets(f"internal error: {type(error).__name__}: {error}", url)
            + ("" if debug else " (rerun with --log-level debug for a traceback)")
        )
        if debug and is_open(sys.stderr):  # print_exc with stderr closed writes to stdout
            traceback.print_exc()
        return ExitCode.INTERNAL


def _detach_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _print_error(message: str) -> None:
    # The last line of defence: whatever produced the message, no URL password leaves here.
    write_stderr(f"{PROG}: error: {mask_text(message)}")


def _reject(settings: Resolved, dests: Sequence[str], mode: str) -> None:
    """A flag the user typed that the mode would ignore is an error; the environment is shared, so not."""
    for dest in dests:
        if settings.sources.get(dest) == "flag":
            raise CliError(f"{settings.origin(dest)} does not apply to {mode}", ExitCode.USAGE)


def _dispatch(args: argparse.Namespace, settings: Resolved) -> int:
    if args.headless and not args.demo:
        raise CliError("--headless goes with --demo (for your own handlers use --worker --app ...)", ExitCode.USAGE)
    if args.token_flag is not None:
        raise CliError(
            f"the token is never a flag (ps shows every process's arguments): set {TOKEN_ENV}, "
            f"or put it in a file and give --token-file PATH",
            ExitCode.USAGE,
        )
    if args.serve is not None:
        return _serve_mode(args, settings)
    for flag, given in _SERVE_FLAGS.items():
        if given(args):
            raise CliError(f"{flag} goes with --serve [HOST:]PORT", ExitCode.USAGE)
    if args.worker:
        return _worker_mode(settings)
    if args.demo:
        return _demo_mode(args, settings)
    return _console_mode(settings)


# -- worker -----------------------------------------------------------------------------------------
def _worker_mode(settings: Resolved) -> int:
    from ..worker.app_loader import load_app
    from ..worker.logging_setup import configure_logging
    from ..worker.runner import WorkerConfig, run_worker_blocking

    _reject(settings, ("read_only", "read_preference"), "--worker")
    if not settings["app"]:
        raise CliError(
            "--worker needs --app PACKAGE.MODULE:ATTR (or MONQUE_APP): the module holding your handlers", ExitCode.USAGE
        )
    collector_options = _require_metrics_client(settings)
    configure_logging(settings["log_level"], settings["log_format"])
    app = load_app(settings["app"])
    options = settings.engine_options()
    if app.instance is not None:
        _check_instance_conflicts(settings, app.instance, app.spec)
    else:
        from .urlcheck import check_url

        check_url(settings["url"], connect_timeout=settings["connect_timeout"])
    config = WorkerConfig(
        url=settings["url"],
        monque_options=options,
        instance=app.instance,
        setup=app.setup,
        app_label=f"--app {app.spec!r}",
        summary_interval=_or(settings["summary_interval"], 30.0),
        duration=settings["duration"] or None,
        metrics=settings["metrics"],
        metrics_options=collector_options,
    )
    return run_worker_blocking(config)


def _require_metrics_client(settings: Resolved) -> dict[str, Any]:
    """``--metrics`` checked (``listen_checks``) and, without prometheus-client installed, refused
    before anything opens; the collector's options."""
    options = metrics_options(settings)
    if settings["metrics"] is None:
        return options
    try:
        import prometheus_client  # noqa: F401 - only whether it imports
    except ImportError:
        raise CliError(
            f"{settings.origin('metrics')} needs prometheus-client: pip install 'monque-tui[metrics]'", ExitCode.USAGE
        ) from None
    return options


def _check_instance_conflicts(settings: Resolved, instance: Any, spec: str) -> None:
    """The app's own Monque runs as built; settings we could not honour are errors, not surprises."""
    fix = f"export a setup function (def setup(monque): ...) so {PROG} builds the Monque, or drop"
    if settings.given("url") and settings["url"] != instance.display_url:
        raise CliError(
            f"--app {spec!r} is a Monque instance bound to {mask_url(instance.display_url)}, but "
            f"{settings.origin('url')} says {mask_url(settings['url'])}; {fix} {settings.origin('url')}",
            ExitCode.USAGE,
        )
    for option in OPTIONS:
        if option.engine_option is None or not settings.given(option.dest):
            continue
        current = getattr(instance.options, option.engine_option)
        if settings[option.dest] != current:
            raise CliError(
                f"{settings.origin(option.dest)} cannot change --app {spec!r}: it is a Monque instance built with "
                f"{option.engine_option}={current!r}; {fix} {settings.origin(option.dest)}",
                ExitCode.USAGE,
            )


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


# -- serve ------------------------------------------------------------------------------------------
#: Flags that only mean something with --serve: whether each was given.
_SERVE_FLAGS: dict[str, Callable[[argparse.Namespace], bool]] = {
    "--public-url": lambda args: args.public_url is not None,
    "--max-sessions": lambda args: args.max_sessions is not None,
    "--token-file": lambda args: args.token_file is not None,
    "--session-lifetime": lambda args: args.session_lifetime is not None,
}


def _serve_mode(args: argparse.Namespace, settings: Resolved) -> int:
    """Check everything here, then import the web stack: a bad flag is one line even without the extra."""
    from ..serve.options import ServeConfig, check_address, load_token, resolve_session_lifetime
    from .urlcheck import check_url

    if args.headless:
        raise CliError("--headless goes with --demo, not --serve", ExitCode.USAGE)
    if settings.sources.get("app") == "flag":
        raise CliError(
            f"--serve serves the console only; run your handlers with {PROG} --worker --app ... beside it",
            ExitCode.USAGE,
        )
    _reject(
        settings,
        ("summary_interval", "duration", "metrics", *METRICS_ONLY),
        "--serve (they are for --worker and --demo --headless)",
    )
    check_address(args.serve, settings["allow_remote"], args.public_url)
    session_lifetime = resolve_session_lifetime(args.session_lifetime, os.environ)
    token = load_token(args.token_file, os.environ)
    from ..console.config import read_only_url

    url = read_only_url(settings["url"]) if settings["read_only"] else settings["url"]
    check_url(url, connect_timeout=settings["connect_timeout"])  # the sessions open it as the console would
    try:
        from ..serve.server import serve
    except ImportError as error:
        raise CliError(
            f"--serve needs the serve extra ({error}): pip install 'monque-tui[serve]'", ExitCode.INTERNAL
        ) from None
    from ..worker.logging_setup import configure_logging

    configure_logging(settings["log_level"], settings["log_format"])
    return serve(
        ServeConfig(
            address=args.serve,
            token=token,
            public_url=args.public_url,
            max_sessions=args.max_sessions or DEFAULT_MAX_SESSIONS,
            read_only=settings["read_only"],
            child_environment=_session_environment(settings),
            session_lifetime=session_lifetime,
        )
    )


def _session_environment(settings: Resolved) -> dict[str, str]:
    """What each session's console reads instead of flags: the store URL and the settings given."""
    environment = {"MONQUE_URL": settings["url"]}
    for option in OPTIONS:
        if option.dest in ("app", "allow_remote") or not settings.given(option.dest):
            continue
        value = settings[option.dest]
        environment[option.env] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    return environment


# -- demo -------------------------------------------------------------------------------------------
def _demo_mode(args: argparse.Namespace, settings: Resolved) -> int:
    from ..demo import app as demo
    from .urlcheck import check_url, reject_read_only_for_workers

    if settings.sources.get("app") == "flag":
        raise CliError("--demo brings its own handlers; drop --app (or run --worker --app ...)", ExitCode.USAGE)
    # MONQUE_URL is deliberately ignored: it may name a real queue, and the demo writes jobs.
    url = args.url or DEMO_URL
    check_url(url, connect_timeout=settings["connect_timeout"])
    reject_read_only_for_workers(url, "--demo")
    options = {**demo.DEMO_OPTIONS, **settings.engine_options()}
    if args.headless:
        from ..worker.logging_setup import configure_logging
        from ..worker.runner import WorkerConfig, run_worker_blocking

        _reject(settings, ("read_only", "read_preference"), "--demo --headless")
        collector_options = _require_metrics_client(settings)
        configure_logging(settings["log_level"], settings["log_format"])
        return run_worker_blocking(
            WorkerConfig(
                url=url,
                monque_options=options,
                setup=demo.setup,
                app_label="the demo",
                summary_interval=_or(settings["summary_interval"], 2.0),
                duration=_or(settings["duration"], 15.0) or None,
                mode="demo",
                metrics=settings["metrics"],
                metrics_options=collector_options,
            )
        )
    _reject(
        settings,
        ("summary_interval", "duration", "metrics", *METRICS_ONLY),
        "the console (they are for --worker and --demo --headless)",
    )
    reject_unused_allow_remote(settings)
    from ..console.config import ConsoleConfig

    return _run_console(
        ConsoleConfig(
            url=url,
            read_only=settings["read_only"],
            monque_options=options,
            setup=demo.setup,
            start_workers=True,
            label="demo",
        )
    )


# -- console ----------------------------------------------------------------------------------------
def _console_mode(settings: Resolved) -> int:
    from ..console.config import ConsoleConfig
    from .urlcheck import check_url, reject_read_only_for_workers

    _reject(
        settings,
        ("summary_interval", "duration", "metrics", *METRICS_ONLY),
        "the console (they are for --worker and --demo --headless)",
    )
    reject_unused_allow_remote(settings)
    setup = None
    if settings["app"]:
        from ..worker.app_loader import load_app

        app = load_app(settings["app"])
        if app.instance is not None:
            raise CliError(
                f"--app {app.spec!r} is a Monque instance; the console builds its own Monque on its event loop, "
                "so with the console --app must name a setup function (def setup(monque): ...); "
                f"or run the instance headless with {PROG} --worker --app {app.spec}",
                ExitCode.USAGE,
            )
        setup = app.setup
    config = ConsoleConfig(
        url=settings["url"],
        read_only=settings["read_only"],
        monque_options=settings.engine_options(),
        setup=setup,
        start_workers=setup is not None,
        label=settings["app"] if setup is not None else None,
        read_preference=settings["read_preference"],
    )
    if config.read_preference != "primary" and not config.url.lower().startswith("mongodb"):
        raise CliError(
            f"{settings.origin('read_preference')} applies to a MongoDB store (replica set); "
            f"{mask_url(config.url)} is not one: drop it",
            ExitCode.USAGE,
        )
    check_url(config.url, connect_timeout=settings["connect_timeout"])  # with --read-only: sqlite ?mode=ro
    if config.start_workers:
        reject_read_only_for_workers(config.url, f"--app {settings['app']!r}")
    return _run_console(config)


def _run_console(config: Any) -> int:
    try:
        from ..console.launch import run_console
    except ImportError as error:
        if error.name in ("monque_tui.console", "monque_tui.console.launch", "textual") or (
            error.name or ""
        ).startswith("textual."):
            raise CliError(
                f"the console is not available ({error}); the headless modes still work: "
                f"{PROG} --worker or {PROG} --demo --headless",
                ExitCode.INTERNAL,
            ) from None
        raise
    return int(run_console(config))
