"""``monque-tui COMMAND ...``: fleet and queue control for scripts (issue 13), no UI.

    monque-tui pause NAME [URL]                stop every Python worker claiming NAME
    monque-tui resume NAME                     let them claim it again
    monque-tui paused                          list paused names
    monque-tui instances                       the fleet: registered and inferred instances
    monque-tui release-dead INSTANCE [--yes]   return a dead owner's jobs to pending now
    monque-tui health [--window MINUTES]       per name: due, scheduled, latency, rates
    monque-tui export --status failed --format jsonl --output FILE|-
    monque-tui migrate [--retention]           build missing MongoDB indexes before a deploy
    monque-tui check [--json]                  a doctor for a MongoDB cluster, before a deploy

Their flags are defined in parser.py, with the console's (the one parser); this module runs
what it parsed. Each opens the store with a Monque that is never started (it registers
nothing and claims nothing), does one thing and exits. Errors are one line on stderr with an exit code from
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
from typing import TYPE_CHECKING, TypeVar

from monque_engine import (
    BulkCount,
    BulkOperationResult,
    ConnectionError,
    InvalidJobQueryError,
    JobListFilter,
    Monque,
    MonqueError,
)
from monque_engine.check import Verdict, check_store, worst
from monque_engine.export import export_jobs, iso
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

from ..common.consumers import consumers_of
from ..common.exitcodes import CliError, ExitCode, StoppedBeforeStart
from ..common.streams import stdout_missing, write_stderr
from ..console.formatting import span
from .filter import build_filter, refuse_ambiguous_id
from .parser import COMMANDS, PROGRESS_FROM, parse_command
from .settings import OPTIONS_BY_DEST, resolve_option

if TYPE_CHECKING:
    from monque_engine.scheduler.manager import BulkAction

_T = TypeVar("_T")
#: An export of at least ``PROGRESS_FROM`` jobs says its progress at most this often, in seconds
#: (besides the first and the last line).
PROGRESS_EVERY_S = 1.0


def run_command(argv: Sequence[str]) -> int:
    """Parse (parser.py, the one parser) and run one command; raises ``CliError`` for anything the user can fix."""
    return run_parsed(parse_command(list(argv)))


def run_parsed(args: argparse.Namespace) -> int:
    """Run one command parsed by ``parser.parse``; raises ``CliError`` for anything the user can fix."""
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
    if args.command in _OPENS_NO_MONQUE:
        return _OPENS_NO_MONQUE[args.command](url, args)
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


#: Commands whose results go to stdout (``export`` only with ``--output -``). ``repair-counts``
#: and ``migrate`` were missing: with stdout closed they repaired or built, reported nothing
#: and exited 0 (probe-cli).
_PRINTS_RESULTS = frozenset(
    {"paused", "instances", "health", "cancel", "retry", "delete", "check", "repair-counts", "migrate"}
)


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


async def _stoppable(work: Awaitable[_T], args: argparse.Namespace) -> _T:
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
    line = f"stopped by {what} before {args.command} finished" + getattr(args, "stopped_after", "")
    output = getattr(args, "output", None)
    if args.command == "export" and output not in (None, "-"):
        line += f"; {output} was not written" + (" (the earlier file is unchanged)" if Path(output).exists() else "")
    return line


async def _with_monque(
    url: str, args: argparse.Namespace, handler: Callable[[Monque, argparse.Namespace], Awaitable[int]]
) -> int:
    from .urlcheck import check_url_in_thread

    if args.command == "pause":
        # Pausing ahead of the first worker is allowed, so a new file may be made; but a
        # mistyped path must not pass for the real store in silence ("paused email").
        args.new_store = _missing_sqlite_path(url)
        args.new_collection = _missing_collection(url, args.collection)
        _refuse_pausing_unknown_in_a_new_store(args)
    else:
        _require_existing_sqlite(url)
        _require_existing_collection(url, args.collection)
    await check_url_in_thread(url, connect_timeout=args.connect_timeout)  # the loop hears a stop meanwhile
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


def _refuse_pausing_unknown_in_a_new_store(args: argparse.Namespace) -> None:
    """Without ``--force``, a new store or collection knows no name, so ``_pause`` would
    refuse: refuse before it is made. The refusal left a new 94 KB file behind (a docs
    probe)."""
    if args.force or not (args.new_store or args.new_collection):
        return
    if args.new_store:
        where, check = f"{args.new_store} does not exist", "the path"
    else:
        where, check = f"there is no collection {args.collection!r} ({args.new_collection})", "--collection"
    raise CliError(
        f"pause: {where}, so no job or worker uses {args.name!r} there; check {check}, or pass --force "
        "to make it with the name paused ahead of the first worker",
        ExitCode.USAGE,
    )


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
    """``12s ago``, ``14m ago``, ``3h05m ago``: a dead owner's heartbeat read ``853s``."""
    return "-" if since is None else f"{span(max(0, round((now - since).total_seconds() * 1000)))} ago"


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
                        "supervisor": info.supervisor,
                    }
                )
            )
        return ExitCode.OK
    _out("ID\tKIND\tSTATE\tJOBS\tHEARTBEAT\tHOST:PID\tPROCESSED\tFAILED\tSUPERVISOR")
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
                    info.supervisor or "-",  # the --processes group a child belongs to
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
        healths = await monque.queue_health(window_minutes=args.window)
        consumers = consumers_of(await monque.instances())
        for health in healths:
            consumer = consumers.get(health.name)
            _out(
                json.dumps(
                    {
                        "name": health.name,
                        "due": health.due,
                        "scheduled": health.scheduled,
                        "processing": health.processing,
                        "latency": health.latency,
                        "paused": health.paused,
                        "consumers": None
                        if consumer is None
                        else {"instances": consumer[0], "concurrency": consumer[1]},
                        "perMinute": [
                            {"minute": iso(m.minute), "completed": m.completed, "failed": m.failed}
                            for m in health.per_minute
                        ],
                    }
                )
            )
        return ExitCode.OK
    rows = await monque.queue_health(window_minutes=args.window)  # a bad --window fails before any output
    consumers = consumers_of(await monque.instances())
    _out(
        # FAILED ATTEMPTS, not FAILED: every failed run in the window, retried or not, by any
        # instance; beside the worker log's and the Workers view's counts, "failed" meant three
        # different numbers (issue 40).
        f"NAME\tDUE\tSCHEDULED\tPROCESSING\tLATENCY\tPAUSED\tCONSUMERS\tCOMPLETED/{args.window}m"
        f"\tFAILED ATTEMPTS/{args.window}m"
    )
    for health in rows:
        latency = _latency(health.latency)
        consumer = consumers.get(health.name)
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
                    # Instances × their summed concurrency; "none" with jobs due is the page at 3 a.m.
                    "none" if consumer is None else f"{consumer[0]}x{consumer[1]}",
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
    if not error.path.strip():  # "cannot write : Is a directory" (probe-cli)
        return CliError(f"--output: no file name given; name a file, or - for stdout (e.g. export.{args.format})")
    return CliError(f"cannot write {error.path}: {error.reason}", ExitCode.USAGE)


async def _migrate(monque: Monque, args: argparse.Namespace) -> int:
    build = getattr(monque.store, "build_indexes", None)
    if build is None:
        # The open (``_with_monque``) already upgraded an older file: say so. It read "nothing
        # to do" after upgrading schema 1 to 9 (a migration probe).
        upgraded_from = getattr(monque.store, "upgraded_from", None)
        version = getattr(monque.store, "schema_version", None)
        if upgraded_from is not None:
            _out(f"upgraded the file from schema version {upgraded_from} to {version}; its indexes are in place")
        else:
            _out(
                f"nothing to do: the file is at schema version {version}, and a SQLite store builds "
                "its indexes when the file is opened"
            )
        return ExitCode.OK

    def progress(position: int, count: int, name: str, state: str) -> None:
        write_stderr(f"migrate: [{position}/{count}] {name}: {state}")

    built = await build(progress, retention=args.retention)
    _out(f"{built} index(es) built; every index Monque declares is present")
    return ExitCode.OK


def _run_check(url: str, args: argparse.Namespace) -> int:
    """``check`` opens no ``Monque``: opening one may build indexes (a small collection) or
    refuse (a large one without the unique-key index), and check must only read and report.
    A SQLite file is looked at, never created; a server is pinged first, as every command does."""
    from .urlcheck import check_url

    if url.strip().lower().startswith("sqlite:"):
        _require_existing_sqlite(url)
        _require_existing_collection(url, args.collection)
    else:
        try:
            check_url(url, connect_timeout=args.connect_timeout)
        except StoppedBeforeStart as stopped:  # said and coded as any command's stop (``_stoppable``)
            what = "ctrl+c" if stopped.signum == signal.SIGINT else signal.Signals(stopped.signum).name
            raise CliError(_stopped_line(what, args), ExitCode.FORCED_BASE + stopped.signum) from None
    try:
        lines = asyncio.run(
            _stoppable(
                check_store(url, args.collection, connect_timeout_s=args.connect_timeout, retention=args.retention),
                args,
            )
        )
    except KeyboardInterrupt:
        raise CliError(_stopped_line("ctrl+c", args), ExitCode.FORCED_BASE + signal.SIGINT) from None
    except ConnectionError as error:
        raise CliError(mask_secrets(str(error), url), ExitCode.STORE) from None
    except OSError as error:
        raise CliError(f"{mask_url(url)}: cannot read the file: {error.strerror or error}", ExitCode.STORE) from None
    except (MonqueError, ValueError) as error:
        raise CliError(mask_secrets(str(error), url), ExitCode.USAGE) from None
    width = max((len(line.topic) for line in lines), default=0)
    for line in lines:
        if args.json:
            _out(json.dumps(line.as_dict(), ensure_ascii=False))
        else:
            _out(
                f"{line.verdict.upper():<5} {line.topic:<{width}}  {line.text}"
                + (f" -- {line.fix}" if line.fix else "")
            )
    counts = {verdict: sum(1 for line in lines if line.verdict is verdict) for verdict in Verdict}
    _err(f"check of {mask_url(url)}: {counts[Verdict.OK]} ok, {counts[Verdict.WARN]} warn, {counts[Verdict.FAIL]} fail")
    return ExitCode.CHECK_FAILED if worst(lines) is Verdict.FAIL else ExitCode.OK


async def _bulk(monque: Monque, args: argparse.Namespace) -> int:
    """``cancel`` / ``retry`` / ``delete``: count, print the count, act only with ``--yes`` and
    never on more than counted (``count_bulk`` then the action ``as_of`` that count)."""
    action = args.command
    listing, description = await build_filter(monque, args, now_ms(), every_job=args.all)
    await refuse_ambiguous_id(monque, args, listing)
    if action == "cancel" and getattr(args, "running", False):
        return await _cancel_running(monque, args, listing, description)
    try:
        count = await monque.count_bulk(action, listing)
    except InvalidJobQueryError as error:
        raise CliError(f"{action}: {error}", ExitCode.USAGE) from None
    if not args.yes or count == 0:
        _out(str(int(count)))
        if count == 0:
            _err(f"no job to {action}: {description}")
        else:
            _err(f"{int(count):,} job(s) to {action} ({description}); nothing changed: add --yes to {action} them")
        return ExitCode.OK
    result = await _bounded(monque, action, listing, count, args)
    line = f"{_DONE[action]} {result.count:,} of {int(count):,} counted job(s) ({description})"
    if result.count < count:
        line += "; the others changed after the count and were left alone"
    if result.errors:
        line += f"; {len(result.errors)} error(s), first: {result.errors[0]}"
    # What was done first, on stderr: written after, it was lost when stdout then failed (a
    # full disk: exit 2 and only "cannot write stdout"; a closed pipe: exit 141 and nothing).
    _err(line)
    _out(str(result.count))
    return ExitCode.OK


#: What each bulk action did, as its lines say it.
_DONE: dict[str, str] = {"cancel": "cancelled", "retry": "retried", "delete": "deleted", "stop": "asked to stop"}


async def _bounded(
    monque: Monque, action: BulkAction, listing: JobListFilter, count: BulkCount, args: argparse.Namespace
) -> BulkOperationResult:
    """The bulk ``action`` on ``listing``, never on more than ``count``. Stopped by a signal
    part way, what it had done stays done (SQLite commits 1,000 jobs a transaction), and
    "stopped before delete finished" alone hid that half the jobs were gone (probe-cli): a
    recount under the same bound, 2 s at most (or until a second ctrl+c), says how many are
    no longer left ("at least": a chunk in flight may still land), in ``args.stopped_after``."""
    act = {
        "cancel": monque.cancel_jobs,
        "retry": monque.retry_jobs,
        "delete": monque.delete_jobs,
        "stop": monque.stop_jobs,
    }[action]
    try:
        return await act(listing, as_of=count)
    except asyncio.CancelledError:
        args.stopped_after = await _how_far(monque, action, listing, count, "stopped")
        raise
    except ConnectionError as error:
        # A full disk or a lock held too long part way: the chunks before it stay done, and
        # the one line said only the store's error while 4,000 of 20,000 jobs were gone (a
        # resource-exhaustion probe).
        raise ConnectionError(f"{error}{await _how_far(monque, action, listing, count, 'failed')}") from error


async def _how_far(monque: Monque, action: BulkAction, listing: JobListFilter, count: BulkCount, ended: str) -> str:
    """``; at least N of the M counted job(s) were deleted before it stopped``: a recount under
    the action's bound, 2 s at most (or until a second ctrl+c); "at least": a chunk in flight
    may still land."""
    done = _DONE[action]
    try:
        left = await asyncio.wait_for(monque.count_bulk(action, listing, as_of=count), 2.0)
    except (asyncio.CancelledError, TimeoutError, MonqueError):
        return f"; the jobs it reached stay {done}: run it again to count what is left"
    return (
        f"; at least {int(count) - int(left):,} of the {int(count):,} counted job(s) were {done} "
        f"before it {ended}: run it again for the rest"
    )


async def _cancel_running(monque: Monque, args: argparse.Namespace, listing: JobListFilter, description: str) -> int:
    """``cancel --running``: the pending jobs are cancelled and the running ones asked to
    stop, each counted first (two counts, each bounding its action as ``_bulk`` does)."""
    try:
        pending = await monque.count_bulk("cancel", listing)
        running = await monque.count_bulk("stop", listing)
    except InvalidJobQueryError as error:
        raise CliError(f"cancel: {error}", ExitCode.USAGE) from None
    total = int(pending) + int(running)
    if not args.yes or total == 0:
        _out(str(total))
        if total == 0:
            _err(f"no pending or running job to cancel: {description}")
        else:
            _err(
                f"{int(pending):,} pending job(s) to cancel and {int(running):,} running job(s) to stop "
                f"({description}); nothing changed: add --yes to cancel and stop them"
            )
        return ExitCode.OK
    cancelled = await _bounded(monque, "cancel", listing, pending, args) if pending else None
    stopped = await _bounded(monque, "stop", listing, running, args) if running else None
    done_cancel = cancelled.count if cancelled else 0
    done_stop = stopped.count if stopped else 0
    line = (
        f"cancelled {done_cancel:,} of {int(pending):,} pending job(s) and asked {done_stop:,} of {int(running):,} "
        f"running job(s) to stop ({description}); a stopped job ends cancelled once its owner cancels the handler"
    )
    refused = stopped.errors if stopped else []
    if refused:
        line += f"; {len(refused)} running job(s) cannot be stopped, first: {refused[0]['error']}"
    if refused and done_stop == 0 and done_cancel == 0:
        raise CliError(line, ExitCode.USAGE)  # nothing could be done: say so with a failing exit
    _err(line)  # before the count on stdout, as _bulk's (a failing stdout lost it)
    _out(str(done_cancel + done_stop))
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

#: Commands that open no ``Monque`` (check must not build or refuse indexes): run with the URL.
_OPENS_NO_MONQUE: dict[str, Callable[[str, argparse.Namespace], int]] = {"check": _run_check}


__all__ = ["COMMANDS", "run_command", "run_parsed"]
