"""``monque-tui``: one command, three ways to run it.

    monque-tui [URL]                                   the console
    monque-tui --worker --app PACKAGE.MODULE:ATTR [URL] a headless processor pool
    monque-tui --demo [URL] [--headless]               a living demo queue
    monque-tui --serve [HOST:]PORT [URL]               the console in browsers, behind a token

plus ``monque-tui COMMAND ...`` (commands.py). Every flag of every form is defined in
parser.py, the one parser; this module dispatches what it parsed. Configuration comes from
flags, then ``MONQUE_*`` environment variables, then defaults (``settings.OPTIONS`` is the
one table of them). User errors end as one line on stderr and
an exit code from ``exitcodes.ExitCode``; tracebacks are for bugs, and only with
``--log-level debug``. Textual is imported only on the console path, so the worker runs
on machines (and in containers) where the console never will.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from monque_engine.store.urls import mask_secrets, mask_text, mask_url

from ..common import startup_gc
from ..common.exitcodes import CliError, ExitCode, StoppedBeforeStart
from ..common.streams import is_open, write_stderr
from ..serve.names import DEFAULT_MAX_SESSIONS, TOKEN_ENV
from .listen_checks import METRICS_ONLY, metrics_options, reject_unused_allow_remote
from .parser import PROG, build_parser, parse, version_text
from .settings import DEMO_URL, OPTIONS, OPTIONS_BY_DEST, Resolved, resolve

if TYPE_CHECKING:
    from ..worker.app_loader import LoadedApp


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``monque-tui`` console script; returns the process exit code."""
    debug = False
    try:
        words = list(argv) if argv is not None else sys.argv[1:]
        if words and not words[0].startswith("-"):
            # Before argparse, which would answer ``list --help`` with the main help as if it
            # were the help of a command named list.
            from .urlcheck import refuse_a_mistyped_command

            refuse_a_mistyped_command(words[0])
        try:
            args = parse(words)  # the one parser (parser.py): the console's form, or COMMAND ...
        except SystemExit as exit_:  # --help and --version
            return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
        if not _starts_the_console(args):
            startup_gc.release()  # held for the console's first rows only (common/startup_gc.py)
        if args.command is not None:  # pause, resume, paused, instances, release-dead, health, export, ...
            from .commands import run_parsed

            try:
                return run_parsed(args)
            except SystemExit as exit_:
                return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
        settings = resolve(vars(args))
        debug = settings["log_level"] == "debug"
        return _dispatch(args, settings)
    except CliError as error:
        _print_error(error.message)
        return error.code
    except StoppedBeforeStart as stopped:
        # A mode stopped during its start-up ping: as a worker stopped before it started.
        write_stderr(f"monque-tui: {stopped.line}")
        return ExitCode.OK
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


def _starts_the_console(args: argparse.Namespace) -> bool:
    """The form parsed runs the console here: not a COMMAND, --worker, --serve or --demo --headless."""
    return args.command is None and not args.worker and args.serve is None and not (args.demo and args.headless)


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
    from ..worker.logging_setup import configure_logging
    from ..worker.runner import WorkerConfig, run_worker_blocking

    _reject(settings, ("read_only", "read_preference"), "--worker")
    if not settings["app"]:
        raise CliError(
            "--worker needs --app PACKAGE.MODULE:ATTR (or MONQUE_APP): the module holding your handlers", ExitCode.USAGE
        )
    collector_options = _require_metrics_client(settings)
    configure_logging(settings["log_level"], settings["log_format"])
    if settings["processes"] is not None:
        return _supervise(settings)
    _follow_supervisor_while_loading()
    app = _load_app_stoppably(settings["app"])
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


def _load_app_stoppably(spec: str) -> LoadedApp:
    """Import the --app, a stop signal meanwhile saying so (a slow import ended a worker by
    the signal's default action: exit 143, not a word)."""
    from ..worker.app_loader import load_app
    from .urlcheck import stops_interrupt

    with stops_interrupt(f"loading {spec}"):
        return load_app(spec)


def _follow_supervisor_while_loading() -> None:
    """A child of ``--processes`` heeds its supervisor's stop from now on, while its --app
    imports and its URL is checked (an import that hangs would otherwise hold the group's
    stop for the whole --shutdown-timeout, and then be killed as a shutdown timeout)."""
    from ..worker.child_link import ChildLink, force_before_start, stop_before_start
    from ..worker.logging_setup import tag_slot

    link = ChildLink.from_environment()
    if link is not None:
        tag_slot(link.slot)
        link.watch_lifeline(stop_before_start, force_before_start)


#: Settings the supervisor settles for its children, so a child never reads the user's value.
_SUPERVISOR_OWNS = ("processes", "duration", "metrics", "instance_id", "allow_remote")


def _supervise(settings: Resolved) -> int:
    """``--processes N``: the supervisor (``worker.supervisor``) starts N ``--worker`` children.

    It loads no --app and opens no store: each child does, and reports its own one-line error;
    the URL is checked here so a typo is one error, not N.
    """
    from ..worker.supervisor import SupervisorConfig, resolve_processes, run_supervisor
    from .urlcheck import check_url

    environment: dict[str, str] = {}
    if settings.given("url"):  # else each child decides, as one worker would (an --app's own Monque)
        check_url(settings["url"], connect_timeout=settings["connect_timeout"])
        environment["MONQUE_URL"] = settings["url"]
    for option in OPTIONS:
        if option.dest in _SUPERVISOR_OWNS or not settings.given(option.dest):
            continue
        value = settings[option.dest]
        if isinstance(value, tuple):
            value = ",".join(value)
        environment[option.env] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    shutdown_timeout = settings["shutdown_timeout"]
    return run_supervisor(
        SupervisorConfig(
            processes=resolve_processes(settings["processes"]),
            child_environment=environment,
            remove=tuple(OPTIONS_BY_DEST[dest].env for dest in _SUPERVISOR_OWNS),
            instance_id=settings["instance_id"],
            shutdown_timeout=30.0 if shutdown_timeout is None else shutdown_timeout,
            duration=settings["duration"] or None,
            metrics=settings["metrics"],
        )
    )


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
        ("summary_interval", "duration", "metrics", "processes", *METRICS_ONLY),
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
            store_url=url,
            monque_options=settings.engine_options(),
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
    if args.url:  # the demo's own file is the demo's; a URL given may name an application's store
        from .demo_store import refuse_foreign_store

        refuse_foreign_store(url, demo.HANDLERS, demo.DEMO_MARK_KEY, DEMO_URL)
    options = {**demo.DEMO_OPTIONS, **settings.engine_options()}
    if args.headless:
        from ..worker.logging_setup import configure_logging
        from ..worker.runner import WorkerConfig, run_worker_blocking

        _reject(settings, ("read_only", "read_preference", "processes"), "--demo --headless")
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
        ("summary_interval", "duration", "metrics", "processes", *METRICS_ONLY),
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
        ("summary_interval", "duration", "metrics", "processes", *METRICS_ONLY),
        "the console (they are for --worker and --demo --headless)",
    )
    reject_unused_allow_remote(settings)
    setup = None
    if settings["app"]:
        app = _load_app_stoppably(settings["app"])
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


__all__ = ["build_parser", "main", "version_text"]  # build_parser, version_text: parser.py's, here as before
