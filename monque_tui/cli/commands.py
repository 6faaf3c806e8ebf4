"""``monque-tui COMMAND ...``: fleet and queue control for scripts (issue 13), no UI.

    monque-tui pause NAME [URL]                stop every Python worker claiming NAME
    monque-tui resume NAME                     let them claim it again
    monque-tui paused                          list paused names
    monque-tui instances                       the fleet: registered and inferred instances
    monque-tui release-dead INSTANCE [--yes]   return a dead owner's jobs to pending now
    monque-tui health [--window MINUTES]       per name: due, scheduled, latency, rates
    monque-tui export --status failed --format jsonl --output FILE|-
    monque-tui migrate [--retention]           build missing MongoDB indexes before a deploy

Each opens the store with a Monque that is never started (it registers nothing and claims
nothing), does one thing and exits. Errors are one line on stderr with an exit code from
``exitcodes.ExitCode``, through the same path as the rest of the command line; this module
never imports Textual.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from monque_engine import ConnectionError, InvalidJobQueryError, Monque, MonqueError
from monque_engine.export import FORMATS, export_jobs, iso
from monque_engine.export_file import ExportFileError, check_export_path, write_export
from monque_engine.store import (
    DEFAULT_URL,
    InvalidCollectionNameError,
    StoreLocation,
    check_collection_name,
    locate_store,
)
from monque_engine.store.urls import mask_secrets, mask_url
from monque_engine.timeutil import now_ms
from monque_engine.validation import validate_job_name

from ..common.exitcodes import CliError, ExitCode
from ..common.streams import print_help_text, stdout_missing, write_stderr
from ..console.formatting import span
from .filter import add_filter_flags, build_filter, join_dashed_values
from .settings import OPTIONS_BY_DEST, parse_connect_timeout, resolve_option

PROG = "monque-tui"
COMMANDS = (
    "pause", "resume", "paused", "instances", "release-dead", "health", "export", "cancel", "retry", "delete",
    "repair-counts", "migrate",
)  # fmt: skip
#: Exports at least this large report progress on stderr (smaller ones only the summary).
PROGRESS_FROM = 1_000
#: ... and at most one such line this often, in seconds (besides the first and the last).
PROGRESS_EVERY_S = 1.0
STATUSES = ("pending", "processing", "completed", "failed", "cancelled")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see {self.prog} --help)", ExitCode.USAGE)

    def _print_message(self, message: str, file: Any = None) -> None:
        print_help_text(message, file)


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO-8601 instant (e.g. 2026-12-03T06:00:00Z or 2026-12-03)"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _statuses(text: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [value for value in values if value not in STATUSES]
    if unknown or not values:
        raise argparse.ArgumentTypeError(f"{text!r}: use one or more of {', '.join(STATUSES)}, comma-separated")
    return values


#: The health window's bound: the per-minute counters are kept 48 h (``monque_engine`` fleet).
MAX_WINDOW_MINUTES = 48 * 60


def _window(text: str) -> int:
    """``--window``: whole minutes the counters cover (the engine's error named its parameter, not the flag)."""
    try:
        minutes = int(text)
    except ValueError:
        minutes = 0
    if not 1 <= minutes <= MAX_WINDOW_MINUTES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected whole minutes from 1 to {MAX_WINDOW_MINUTES} (the counters keep 48 h)"
        )
    return minutes


def _positive_seconds(text: str) -> float:
    """``--connect-timeout`` as the console's flag reads it: ``inf`` was an internal error
    (OverflowError in the driver), ``nan`` and ``-1`` were taken (probe 7)."""
    try:
        return parse_connect_timeout(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None


def _store_flags(parser: argparse.ArgumentParser) -> None:
    # The URL last, as the console and --worker take it (``monque-tui export sqlite:///jobs.db``
    # was "unrecognized arguments"), or with --url.
    parser.add_argument("store_url", nargs="?", default=None, metavar="URL", help="store URL (or --url URL)")
    parser.add_argument(
        "--url", default=None, metavar="URL", help=f"store URL [env: MONQUE_URL] [default: {DEFAULT_URL}]"
    )
    parser.add_argument(
        "--collection",
        default="monque_jobs",
        metavar="NAME",
        help="jobs collection (table) name [default: monque_jobs]",
    )
    parser.add_argument(
        "--connect-timeout",
        type=_positive_seconds,
        default=None,
        metavar="SECONDS",
        help="how long to wait for MongoDB to answer [env: MONQUE_CONNECT_TIMEOUT] [default: 5]",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Fleet and queue control commands (no UI).")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = commands.add_parser(
        "pause",
        help="stop every Python worker claiming NAME (running jobs finish)",
        description="Pause claiming of one job name, stored in the store: every Python "
        "worker stops claiming it within its poll interval; running jobs finish. "
        "Node Monque workers do not honour it.",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--force",
        action="store_true",
        help="pause NAME even though no job and no registered worker uses it (a name not yet in use)",
    )
    _store_flags(p)
    p = commands.add_parser("resume", help="let workers claim NAME again", description="Resume a paused job name.")
    p.add_argument("name", metavar="NAME")
    _store_flags(p)
    p = commands.add_parser(
        "paused", help="list paused job names", description="Print each paused name and since when (tab-separated)."
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    _store_flags(p)
    p = commands.add_parser(
        "instances",
        help="list scheduler instances (registered and inferred)",
        description="Print every instance the store knows of: id, kind (registered or "
        "inferred from processing jobs, e.g. Node workers), alive or dead, jobs "
        "held, heartbeat age, host:pid, processed and failed counts.",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    _store_flags(p)
    p = commands.add_parser(
        "release-dead",
        help="return a dead instance's processing jobs to pending now",
        description="Count, and with --yes release, the processing jobs of an instance whose "
        "heartbeat stopped: it is watched for twice its heartbeat interval plus 1 s (by this "
        "machine's monotonic clock, never its wall clock) and is dead only if nothing of it moved. "
        "The store writes only if nothing moved since: a live instance's jobs are never released.",
    )
    p.add_argument("instance", metavar="INSTANCE")
    p.add_argument("--yes", action="store_true", help="release without asking (otherwise only the count is shown)")
    _store_flags(p)
    p = commands.add_parser(
        "repair-counts",
        help="recount the SQLite store's kept job counts from the jobs",
        description="Counts, stats and the console's tabs read per-name, per-status counts (and its errors "
        "view per-error-group counts) that the SQLite store keeps in the same transaction as every "
        "change. Only a row changed outside "
        "the store (e.g. in the sqlite3 shell) can make them drift; this recounts them from the "
        "job table in one write transaction and prints what differed. MongoDB keeps no counts.",
    )
    _store_flags(p)
    p = commands.add_parser(
        "health",
        help="per job name: due, scheduled, latency, completed/failed per minute",
        description="Queue health per job name, from the jobs and the per-minute counters "
        "Python workers keep in the store (48 h).",
    )
    p.add_argument(
        "--window",
        type=_window,
        default=60,
        metavar="MINUTES",
        help="minutes of completed/failed counts to sum [default: 60]",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    _store_flags(p)
    p = commands.add_parser(
        "migrate",
        help="build the jobs collection's missing indexes (MongoDB), with progress",
        description="Build every index Monque declares that the jobs collection lacks, one at a "
        "time, each reported on stderr, with no deadline. Run it once before deploying workers "
        "onto a large existing collection: workers do not build indexes there (a missing "
        "unique-key index makes them refuse to start). SQLite builds its own when opened.",
    )
    p.add_argument("--retention", action="store_true", help="also the retention index (for workers with job_retention)")
    _store_flags(p)
    p = commands.add_parser(
        "export",
        help="write every matching job to JSON Lines or CSV",
        description="Stream every job matching the filters to JSON Lines or CSV (camelCase "
        "fields, _id as 24-hex, instants ISO-8601 UTC), in constant memory; "
        f"progress on stderr from {PROGRESS_FROM} jobs (the first page, then at most one line a second).",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="output format [default: csv for an --output ending .csv, else jsonl]",
    )
    p.add_argument("--output", "-o", default="-", metavar="FILE", help="file to write, or - for stdout [default: -]")
    p.add_argument(
        "--csv-raw",
        action="store_true",
        help="CSV cells exactly as stored; by default a cell starting with = + - @ tab or CR (not a plain "
        "number such as -5) gets a leading ' so a spreadsheet shows it as text instead of running it as a formula",
    )
    add_filter_flags(p, _statuses)
    kind = p.add_mutually_exclusive_group()
    kind.add_argument(
        "--recurring",
        dest="recurring",
        action="store_const",
        const=True,
        default=None,
        help="only jobs with a cron schedule",
    )
    kind.add_argument("--one-off", dest="recurring", action="store_const", const=False, help="only jobs without one")
    _store_flags(p)
    for action, verb, reach in (
        ("cancel", "Cancel", "pending jobs"),
        ("retry", "Retry", "failed and cancelled jobs"),
        ("delete", "Delete", "jobs of any status"),
    ):
        p = commands.add_parser(
            action,
            help=f"{action} every matching job ({reach}); counts first, acts only with --yes",
            description=f"{verb} every job the filter matches ({reach}), in one store operation. "
            "The jobs are counted first and the count printed; with --yes the action then reaches "
            "only jobs that count saw and that have not changed since: never more than counted, "
            "whatever other processes commit meanwhile. Without --yes nothing changes.",
        )
        add_filter_flags(p, _statuses)
        p.add_argument("--yes", action="store_true", help=f"{action} the counted jobs (else only count them)")
        p.add_argument(
            "--all",
            action="store_true",
            help="every job: required when no flag narrows the selection (none given, or a glob such as '*')",
        )
        _store_flags(p)
    return parser


def run_command(argv: Sequence[str]) -> int:
    """Parse and run one command; raises ``CliError`` for anything the user can fix."""
    args = _parse(list(argv))
    _refuse_url_as_name(args)
    _refuse_bad_name(args)
    _refuse_closed_stdout(args)
    if args.command == "export":
        args.format = _export_format(args)
        if args.csv_raw and args.format != "csv":
            raise CliError(
                f"export: --csv-raw applies to CSV only, and this export is {args.format}; add --format csv or drop it",
                ExitCode.USAGE,
            )
    if args.store_url and args.url and args.store_url.strip() != args.url.strip():
        raise CliError(
            f"{args.command}: two store URLs ({mask_url(args.store_url.strip())!r} and --url "
            f"{mask_url(args.url.strip())!r}); give one",
            ExitCode.USAGE,
        )
    url = args.store_url or args.url or os.environ.get("MONQUE_URL") or DEFAULT_URL
    # The flag, else MONQUE_CONNECT_TIMEOUT as the console reads it, else its default: the
    # commands took the flag alone, so a script that set the variable still waited 5 s.
    args.connect_timeout, _ = resolve_option(OPTIONS_BY_DEST["connect_timeout"], args.connect_timeout, os.environ)
    args.url_in_use = url
    if args.command == "export" and args.output != "-":
        try:  # before the store is opened; asked again by the writer, and at the rename
            check_export_path(args.output, url, replace=True)
        except ExportFileError as error:
            raise _export_file_error(error, args) from None
    _refuse_bad_collection(args, url)
    handler = _HANDLERS[args.command]
    try:
        return asyncio.run(_stoppable(_with_monque(url, args, handler), args))
    except KeyboardInterrupt:
        raise CliError(_stopped_line("ctrl+c", args), ExitCode.FORCED_BASE + signal.SIGINT) from None


_STORE_URL = re.compile(r"^\s*(sqlite|mongodb(\+srv)?)://", re.IGNORECASE)


def _refuse_url_as_name(args: argparse.Namespace) -> None:
    """A store URL where a job name or instance id goes is a slip (``pause mongodb://u:pw@h/db``).

    It was taken as a job name: paused, stored, and echoed with its password ("paused
    mongodb://u:pw@…"; probe 5). Say what goes where instead, the password masked.
    """
    for field, label in (("name", "NAME"), ("instance", "INSTANCE")):
        value = getattr(args, field, None)
        if isinstance(value, str) and _STORE_URL.match(value):
            flag = "--name NAME" if args.command == "export" else label
            raise CliError(
                f"{args.command}: {mask_url(value.strip())!r} is a store URL, not {'a job name' if field == 'name' else 'an instance id'}; "
                f"use monque-tui {args.command} {flag} --url URL",
                ExitCode.USAGE,
            )


#: Commands whose results go to stdout (``export`` only with ``--output -``).
_PRINTS_RESULTS = frozenset({"paused", "instances", "health", "cancel", "retry", "delete"})


def _refuse_closed_stdout(args: argparse.Namespace) -> None:
    """``monque-tui paused >&-`` exited 0 having printed nothing; ``export`` said "internal error".

    A script that closed stdout gets one line and exit 2 before the store is opened.
    """
    if not stdout_missing():
        return
    if args.command in _PRINTS_RESULTS or (args.command == "export" and args.output == "-"):
        fix = "redirect it (> FILE or > /dev/null)" + (" or use --output FILE" if args.command == "export" else "")
        raise CliError(f"{args.command}: stdout is closed, so its output would be lost; {fix}", ExitCode.USAGE)


def _export_format(args: argparse.Namespace) -> str:
    """``--format`` as given; without it, CSV for an ``--output`` ending ``.csv`` (as the console's ``E`` does).

    ``export --output failed.csv`` wrote JSON Lines into failed.csv and reported "(jsonl)".
    """
    if args.format is not None:
        return str(args.format)
    return "csv" if str(args.output).lower().endswith(".csv") else "jsonl"


def _parse(words: list[str]) -> argparse.Namespace:
    """Parse ``COMMAND ARGS…`` with the command's options anywhere among its positionals.

    ``release-dead worker-7 --yes sqlite:///jobs.db`` and ``pause NAME --collection c URL``
    were "unrecognized arguments: sqlite:///jobs.db": argparse fills NAME and the optional
    URL from the first run of positionals, so a URL after a flag had no slot left (probe 7).
    """
    parser = build_parser()
    if not words or words[0].startswith("-"):
        return parser.parse_args(words)
    sub = next(
        (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
        None,
    )
    command = None if sub is None else sub.choices.get(words[0])
    if command is None:
        return parser.parse_args(words)
    args: argparse.Namespace = command.parse_intermixed_args(join_dashed_values(words[1:]))
    args.command = words[0]
    return args


def _refuse_bad_collection(args: argparse.Namespace, url: str) -> None:
    """A ``--collection`` no store can have is a bad flag (exit 2), said before anything is opened.

    It was "Failed to initialize Monque: Collection name '' cannot be …", exit 3, as if the
    store could not be opened (probe 7).
    """
    try:
        check_collection_name(url, args.collection)
    except InvalidCollectionNameError as error:
        raise CliError(f"--collection: {error}", ExitCode.USAGE) from None


def _located(url: str) -> StoreLocation | None:
    """Where ``url`` points, looked at without creating or changing anything (None: the URL
    itself is wrong, which ``check_url`` then says)."""
    try:
        return locate_store(url)
    except (MonqueError, ValueError):
        return None


def _missing_collection(url: str, collection: str) -> str | None:
    """What a SQLite file that exists holds instead of ``collection`` (None: it is there, or not checkable).

    Read with a read-only connection, so checking never changes the file. MongoDB makes its
    collections lazily and is not checked.
    """
    location = _located(url)
    if location is None or location.collections is None or collection in location.collections:
        return None
    known = location.collections
    return f"{location.path} has {', '.join(known)}" if known else f"{location.path} has no Monque collection"


def _require_existing_collection(url: str, collection: str) -> None:
    """A command other than ``pause`` must not create a collection where its name was mistyped.

    ``export --collection nosuch sqlite:///jobs.db`` said "exported 0 job(s)", exit 0, and
    left six new ``nosuch*`` tables in jobs.db (probe 7).
    """
    instead = _missing_collection(url, collection)
    if instead is not None:
        raise CliError(
            f"{mask_url(url)}: no collection {collection!r} ({instead}); check --collection "
            "(this command never creates one)",
            ExitCode.STORE,
        )


def _refuse_bad_name(args: argparse.Namespace) -> None:
    """Reject a job name no job can have before the store is opened.

    ``pause '' sqlite:///typo.db`` said the name was invalid, yet had already created
    ``typo.db`` (pause may make a new store), so bad input changed the disk (probe 7).
    """
    if args.command not in ("pause", "resume"):
        return
    try:
        validate_job_name(args.name)
    except MonqueError as error:
        raise CliError(f"{args.command}: {error}", ExitCode.USAGE) from None


async def _stoppable(work: Awaitable[int], args: argparse.Namespace) -> int:
    """Run ``work``; SIGTERM or SIGHUP (the terminal closed) cancel it as ctrl+c does.

    Killed outright by those signals, ``export --output`` left its ``FILE.partial-PID``
    behind and the command ended without a word (probe 5). Cancelled, its cleanup runs, and
    the one line says what was not done; the exit code stays 128 + the signal (143, 129).
    """
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    received: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        if not received:
            received.append(signum)
            task.cancel()

    installed = []
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
            pass
    try:
        return await work
    except asyncio.CancelledError:
        if not received:
            raise
        raise CliError(_stopped_line(received[0].name, args), ExitCode.FORCED_BASE + received[0]) from None
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def _stopped_line(what: str, args: argparse.Namespace) -> str:
    """``stopped by SIGTERM before export finished; out.jsonl was not written``."""
    line = f"stopped by {what} before {args.command} finished"
    output = getattr(args, "output", None)
    if args.command == "export" and output not in (None, "-"):
        line += f"; {output} was not written" + (" (the earlier file is unchanged)" if Path(output).exists() else "")
    return line


async def _with_monque(
    url: str, args: argparse.Namespace, handler: Callable[[Monque, argparse.Namespace], Awaitable[int]]
) -> int:
    from .urlcheck import check_url

    if args.command == "pause":
        # Pausing ahead of the first worker is allowed, so a new file may be made; but a
        # mistyped path must not pass for the real store in silence ("paused email").
        args.new_store = _missing_sqlite_path(url)
        args.new_collection = _missing_collection(url, args.collection)
    else:
        _require_existing_sqlite(url)
        _require_existing_collection(url, args.collection)
    check_url(url, connect_timeout=args.connect_timeout)
    try:
        # migrate builds the indexes itself, with progress: the open must not refuse or build.
        monque = Monque(
            url,
            collection_name=args.collection,
            recover_stale_jobs=False,
            skip_index_creation=args.command == "migrate",
        )
        await monque.initialize()
    except (MonqueError, ValueError) as error:
        raise CliError(mask_secrets(str(error), url), ExitCode.STORE) from None
    try:
        return await handler(monque, args)
    except InvalidJobQueryError as error:
        raise CliError(mask_secrets(str(error), url), ExitCode.USAGE) from None
    except MonqueError as error:
        code = ExitCode.STORE if isinstance(error, ConnectionError) else ExitCode.USAGE
        raise CliError(mask_secrets(str(error), url), code) from None
    finally:
        await monque.close()


def _missing_sqlite_path(url: str) -> str | None:
    """The file a SQLite URL names, when it does not exist yet (None: it exists, or not SQLite)."""
    location = _located(url)
    return location.path if location is not None and location.exists is False else None


def _require_existing_sqlite(url: str) -> None:
    """A command that reads (or resumes) must not create an empty database where a path was mistyped."""
    path = _missing_sqlite_path(url)
    if path is not None:
        raise CliError(
            f"{mask_url(url)}: {path} does not exist; check the path (this command never creates one)", ExitCode.STORE
        )


def _out(text: str) -> None:
    """One line of results on stdout; a write error there (a full disk) is the user's to fix.

    ``paused > /dev/full`` read "internal error: OSError: [Errno 28]", exit 1 (probe 7);
    ``export`` already said "cannot write stdout", exit 2, as this does now.
    """
    try:
        print(text, flush=True)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise CliError(f"cannot write stdout: {error.strerror or error}", ExitCode.USAGE) from None


def _err(text: str) -> None:
    write_stderr(text)


async def _known_names(monque: Monque) -> set[str]:
    """Names some job has, some live or dead registered worker handles, or that are paused already."""
    names = set(await monque.job_names()) | set(await monque.paused())
    for instance in await monque.instances():
        names |= set(instance.workers)
    return names


async def _pause(monque: Monque, args: argparse.Namespace) -> int:
    if not args.force:
        known = await _known_names(monque)
        if args.name not in known:
            # A typo ("ops.slwo") was paused in silence, and nothing warned that ops.slow ran on.
            close = difflib.get_close_matches(args.name, sorted(known), n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise CliError(
                f"pause: no job and no registered worker uses the name {args.name!r}; {hint}"
                "pass --force to pause it anyway (a name not in use yet)",
                ExitCode.USAGE,
            )
    changed = await monque.pause(args.name)
    line = f"paused {args.name}" if changed else f"{args.name} was already paused"
    if getattr(args, "new_store", None):
        line += f" in a new, empty store: {args.new_store} did not exist (check the path if you meant an existing one)"
    elif getattr(args, "new_collection", None):
        line += (
            f" in a new collection {args.collection!r} ({args.new_collection}; check --collection if you meant one "
            "of those)"
        )
    _err(line)
    return ExitCode.OK


async def _resume(monque: Monque, args: argparse.Namespace) -> int:
    changed = await monque.resume(args.name)
    _err(f"resumed {args.name}" if changed else f"{args.name} was not paused")
    return ExitCode.OK


async def _repair_counts(monque: Monque, args: argparse.Namespace) -> int:
    differed = await monque.repair_counts()
    if differed is None:
        _out(f"{monque.store.display_url}: MongoDB answers counts from its indexes; nothing to repair")
    elif not differed:
        _out("counts already exact")
    else:
        for name, status, kept, counted in differed:
            _out(f"{name} {status}: {kept} -> {counted}")
        _out(f"repaired {len(differed)} count(s)")
    return ExitCode.OK


async def _paused(monque: Monque, args: argparse.Namespace) -> int:
    paused = await monque.paused()
    if not paused:
        _err("nothing paused")  # stdout stays empty for scripts; a person sees why
        return ExitCode.OK
    for name, since in paused.items():
        if args.json:
            _out(json.dumps({"name": name, "since": iso(since)}))
        else:
            _out(f"{name}\t{since.isoformat(timespec='seconds')}")
    return ExitCode.OK


def _age(since: datetime | None, now: datetime) -> str:
    return "-" if since is None else f"{max(0.0, (now - since).total_seconds()):.0f}s"


async def _instances(monque: Monque, args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    instances = await monque.instances()
    if args.json:
        for info in instances:
            _out(
                json.dumps(
                    {
                        "id": info.id,
                        "inferred": info.inferred,
                        "alive": info.alive,
                        "jobsHeld": info.jobs_held,
                        "lastHeartbeat": iso(info.last_heartbeat),
                        "heartbeatInterval": info.heartbeat_interval,
                        "host": info.host,
                        "pid": info.pid,
                        "version": info.version,
                        "startedAt": iso(info.started_at),
                        "workers": info.workers,
                        "running": info.running,
                        "processed": info.processed,
                        "failed": info.failed,
                    }
                )
            )
        return ExitCode.OK
    _out("ID\tKIND\tSTATE\tJOBS\tHEARTBEAT\tHOST:PID\tPROCESSED\tFAILED")
    for info in instances:
        where = "-" if info.host is None else f"{info.host}:{info.pid}"
        _out(
            "\t".join(
                (
                    info.id,
                    "inferred" if info.inferred else "registered",
                    "alive" if info.alive else "dead",
                    str(info.jobs_held),
                    _age(info.last_heartbeat, now),
                    where,
                    "-" if info.processed is None else str(info.processed),
                    "-" if info.failed is None else str(info.failed),
                )
            )
        )
    return ExitCode.OK


async def _release_dead(monque: Monque, args: argparse.Namespace) -> int:
    # An unknown or live instance used to read "0 processing job(s) of X can be released now;
    # rerun with --yes", exit 0: a typo looked like a dead owner with nothing held.
    info = next((i for i in await monque.instances() if i.id == args.instance), None)
    if info is None:
        raise CliError(
            f"no instance {args.instance!r} on this store (registered, or holding processing jobs); "
            "monque-tui instances lists them",
            ExitCode.USAGE,
        )
    # Alive or dead is decided by watching its heartbeat move (Monque.check_owner), never by this
    # machine's clock: ``info.alive`` compares the stamps with it, and a clock an hour ahead
    # took a worker beating every second for dead (issue 25).
    if _stderr_is_terminal():
        _err(
            f"watching {args.instance}'s heartbeat for up to {2 * info.heartbeat_interval + 1:g} s "
            "(twice its interval, plus 1 s): only an instance that writes nothing meanwhile is dead"
        )
    check = await monque.check_owner(args.instance)
    if check.alive:
        raise CliError(
            f"{args.instance} is alive (its heartbeat moved while watched for {check.watched:.1f} s): a live "
            "instance's jobs are never released; stop it, or retry once it has stopped beating",
            ExitCode.USAGE,
        )
    if not args.yes:
        _err(
            f"{check.releasable} processing job(s) of {args.instance} can be released now (nothing of it moved "
            f"for {check.watched:.1f} s); rerun with --yes to release them"
        )
        return ExitCode.OK
    released = await monque.release_dead_owner_jobs(args.instance)  # continues the watch: no second wait
    _err(f"released {released} job(s) of {args.instance} back to pending")
    return ExitCode.OK


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


async def _health(monque: Monque, args: argparse.Namespace) -> int:
    if args.json:
        for health in await monque.queue_health(window_minutes=args.window):
            _out(
                json.dumps(
                    {
                        "name": health.name,
                        "due": health.due,
                        "scheduled": health.scheduled,
                        "processing": health.processing,
                        "latency": health.latency,
                        "paused": health.paused,
                        "perMinute": [
                            {"minute": iso(m.minute), "completed": m.completed, "failed": m.failed}
                            for m in health.per_minute
                        ],
                    }
                )
            )
        return ExitCode.OK
    rows = await monque.queue_health(window_minutes=args.window)  # a bad --window fails before any output
    _out(f"NAME\tDUE\tSCHEDULED\tPROCESSING\tLATENCY\tPAUSED\tCOMPLETED/{args.window}m\tFAILED/{args.window}m")
    for health in rows:
        latency = _latency(health.latency)
        _out(
            "\t".join(
                str(v)
                for v in (
                    health.name,
                    health.due,
                    health.scheduled,
                    health.processing,
                    latency,
                    "yes" if health.paused else "no",
                    health.completed_last_window,
                    health.failed_last_window,
                )
            )
        )
    return ExitCode.OK


def throttled_progress(
    say: Callable[[str], None], clock: Callable[[], float] = time.monotonic
) -> Callable[[int, int], None]:
    """Progress lines for a large export: the first page, then at most one a second, then the last.

    A line per 500-job page was 2,000 lines for a million jobs; a terminal scrolled them
    past, a log kept them all.
    """
    last_said: float | None = None

    def progress(written: int, total: int) -> None:
        nonlocal last_said
        if total < PROGRESS_FROM or not written:
            return
        now = clock()
        if last_said is None or written >= total or now - last_said >= PROGRESS_EVERY_S:
            last_said = now
            say(f"exported {written}/{total} jobs")

    return progress


def _latency(seconds: float | None) -> str:
    """Tenths of a second while it is small; a backlog of hours read "13512.4s" (``--json`` keeps seconds)."""
    if seconds is None:
        return "-"
    return f"{seconds:.1f}s" if seconds < 60 else span(round(seconds * 1000))


async def _export(monque: Monque, args: argparse.Namespace) -> int:
    listing, _description = await build_filter(monque, args, now_ms())
    target = args.output

    progress = throttled_progress(_err)

    if target == "-":
        try:
            written = await export_jobs(
                monque, sys.stdout, listing, args.format, progress=progress, csv_raw=args.csv_raw
            )
        except BrokenPipeError:
            raise
        except OSError as error:  # a full disk behind a redirect: the user's to fix, not a bug
            raise CliError(f"cannot write stdout: {error.strerror or error}", ExitCode.USAGE) from None
    else:
        try:  # the one file writer (export_file): temporary file, checked rename, devices in place
            written = await write_export(
                monque,
                target,
                listing,
                args.format,
                store_url=args.url_in_use,
                replace=True,
                progress=progress,
                csv_raw=args.csv_raw,
            )
        except ExportFileError as error:
            raise _export_file_error(error, args) from None
    _err(f"exported {written} job(s) to {'stdout' if target == '-' else target} ({args.format})")
    return ExitCode.OK


def _export_file_error(error: ExportFileError, args: argparse.Namespace) -> CliError:
    """The one line (exit 2) for a path the export cannot be written to (``export_file``)."""
    if error.problem == "refused":
        return CliError(
            f"refusing to write the export over {error.path}: {error.reason}; name another file "
            f"(e.g. export.{args.format})",
            ExitCode.USAGE,
        )
    if error.problem == "directory":
        return CliError(f"cannot write {error.path}: it is a directory; name a file", ExitCode.USAGE)
    return CliError(f"cannot write {error.path}: {error.reason}", ExitCode.USAGE)


async def _migrate(monque: Monque, args: argparse.Namespace) -> int:
    build = getattr(monque.store, "build_indexes", None)
    if build is None:
        _out("nothing to do: a SQLite store builds its indexes when the file is opened")
        return ExitCode.OK

    def progress(position: int, count: int, name: str, state: str) -> None:
        write_stderr(f"migrate: [{position}/{count}] {name}: {state}")

    built = await build(progress, retention=args.retention)
    _out(f"{built} index(es) built; every index Monque declares is present")
    return ExitCode.OK


async def _bulk(monque: Monque, args: argparse.Namespace) -> int:
    """``cancel`` / ``retry`` / ``delete``: count, print the count, act only with ``--yes`` and
    never on more than counted (``count_bulk`` then the action ``as_of`` that count)."""
    action = args.command
    listing, description = await build_filter(monque, args, now_ms(), every_job=args.all)
    try:
        count = await monque.count_bulk(action, listing)
    except InvalidJobQueryError as error:
        raise CliError(f"{action}: {error}", ExitCode.USAGE) from None
    if not args.yes or count == 0:
        _out(str(int(count)))
        verb = {"cancel": "cancel", "retry": "retry", "delete": "delete"}[action]
        if count == 0:
            _err(f"no job to {verb}: {description}")
        else:
            _err(f"{int(count):,} job(s) to {verb} ({description}); nothing changed: add --yes to {verb} them")
        return ExitCode.OK
    act = {"cancel": monque.cancel_jobs, "retry": monque.retry_jobs, "delete": monque.delete_jobs}[action]
    result = await act(listing, as_of=count)
    _out(str(result.count))
    done = {"cancel": "cancelled", "retry": "retried", "delete": "deleted"}[action]
    line = f"{done} {result.count:,} of {int(count):,} counted job(s) ({description})"
    if result.count < count:
        line += "; the others changed after the count and were left alone"
    if result.errors:
        line += f"; {len(result.errors)} error(s), first: {result.errors[0]}"
    _err(line)
    return ExitCode.OK


_HANDLERS: dict[str, Callable[[Monque, argparse.Namespace], Awaitable[int]]] = {
    "cancel": _bulk,
    "retry": _bulk,
    "delete": _bulk,
    "pause": _pause,
    "resume": _resume,
    "paused": _paused,
    "instances": _instances,
    "release-dead": _release_dead,
    "health": _health,
    "export": _export,
    "repair-counts": _repair_counts,
    "migrate": _migrate,
}


def describe() -> str:
    """The commands section of ``monque-tui --help``."""
    return (
        "commands (for scripts; each takes the store URL last or as --url URL, default $MONQUE_URL,\n"
        "and --help):\n"
        "  monque-tui pause NAME | resume NAME | paused   pause claiming of a job name (Python workers)\n"
        "  monque-tui instances                           the fleet, registered and inferred, alive or dead\n"
        "  monque-tui release-dead INSTANCE [--yes]       return a dead instance's jobs to pending now\n"
        "  monque-tui health [--window MINUTES] [--json]  due, scheduled, latency, completed/failed rates\n"
        "  monque-tui export --status failed --format csv --output failed.csv   every matching job\n"
        "  monque-tui cancel|retry|delete FILTER [--yes]  count, then act on never more than counted\n"
        "    FILTER as the console's filter bar: --name 'email*' --id 1a2b3c4d --contains TEXT\n"
        "    --created -2h.. --next-run now..+1h --when 'updated today' --status failed --error-group TEXT\n"
        "  monque-tui repair-counts                       recount SQLite's kept counts (after a hand edit)\n"
        "  monque-tui migrate [--retention]               build missing MongoDB indexes before a deploy\n"
    )


__all__ = ["COMMANDS", "build_parser", "describe", "run_command"]
