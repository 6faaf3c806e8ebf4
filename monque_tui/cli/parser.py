"""The whole ``monque-tui`` command line, defined once: every mode, command, flag and its help.

    monque-tui [OPTIONS] [URL]            the console, --worker, --demo, --serve (entry.py runs them)
    monque-tui COMMAND [OPTIONS] [URL]    a command for scripts: pause, export, ... (commands.py runs them)

There were two parsers (entry.py's for the modes, commands.py's for the commands), each with
its own error class, its own store URL and its own ``--connect-timeout`` (one read the
environment, one did not, until probe 7). Here each shared option is written once
(``add_store_url``, ``add_setting``, ``add_collection``), the root's ``--help`` lists the
commands from their own definitions, and ``parse`` is the one way in.

The two forms share the first word, and it is settled explicitly, before argparse sees it: a
first word that is exactly a command's name is that command (``monque-tui export``); anything
else is the console's form, where a store URL always has a scheme (``sqlite:///export``), so
no URL is ever taken for a command. A command name in the URL's place after the console's
flags (``monque-tui --read-only export``) is said to be one, not read as a bad URL.

Parsing imports no store and no Textual: the worker parses its flags on machines where the
console never runs.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

from monque_engine import __version__ as engine_version
from monque_engine.export_formats import FORMATS
from monque_engine.store import DEFAULT_URL

from ..common.exitcodes import CliError, ExitCode
from ..common.streams import print_help_text
from ..serve.names import DEFAULT_MAX_SESSIONS, SESSION_LIFETIME_ENV, TOKEN_ENV, TOKEN_FILE_ENV
from .filter import add_filter_flags, join_dashed_values
from .settings import DEMO_URL, OPTIONS, OPTIONS_BY_DEST, Option, parse_positive_int

PROG = "monque-tui"
#: Exports at least this large report progress on stderr (smaller ones only the summary); said
#: in export's --help, so defined with it.
PROGRESS_FROM = 1_000
STATUSES = ("pending", "processing", "completed", "failed", "cancelled")
#: The health window's bound: the per-minute counters are kept 48 h (``monque_engine`` fleet).
MAX_WINDOW_MINUTES = 48 * 60

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
  monque-tui --worker --app myapp.tasks:setup --processes auto    one worker process per core
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

With --processes N the command is a supervisor: it starts N worker processes, restarts one
that dies (after a backoff), asks all of them to stop on a stop signal (a process that also
gets the signal itself, from pkill -f or systemd, counts one stop; a second signal to the
supervisor stops them all at once), and serves one --metrics endpoint for the group; a
process that keeps exiting before it starts stops the group (exit 7, or at once with its
own code 2, 3 or 4 when none ever started).

exit codes:
  0  clean stop                       3  the store cannot be opened or reached
  1  internal error (a bug)           4  the --app cannot be loaded or has no handlers
  2  bad flag, env value or URL       5  shutdown timed out; jobs left for stale recovery
  6  monque-tui check found a failing check (warnings alone exit 0)
  7  --worker --processes: a worker process kept exiting before it started (crash loop)
  129/130/143  forced exit by a second SIGHUP/SIGINT/SIGTERM (commands: the first)
  141  stdout's reader went away (e.g. monque-tui export | head)
"""

#: After the generated list of commands in the root's --help: the filter language they share.
COMMANDS_FOOTER = """\
    FILTER as the console's filter bar: --name 'email*' --id 1a2b3c4d (one job; --search: every
    match) --contains TEXT --created -2h.. --next-run now..+1h --when 'updated today' --status failed
    --error-group TEXT
  e.g. monque-tui export --status failed --format csv --output failed.csv
"""


class CliParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``CliError``, exit 2) naming where help is;
    no prefix of a flag stands for it (``--all``, the bulk commands' flag, was read as
    ``--allow-remote`` and served the console on every interface); and a flag that takes
    one value is refused when given twice (``refuse_repeats``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def refuse_repeats(self, words: list[str]) -> None:
        """A flag of one value given twice: argparse keeps the last and drops the first
        without a word, so ``delete --created ..-7d --created ..now`` reached every job of
        the wider range (probe-cli). Flags that collect (``append``) or switch may repeat."""
        seen: set[argparse.Action] = set()
        value_next = False
        for word in words:
            if value_next:
                value_next = False
                continue
            if word == "--":
                return
            name, equals, _ = word.partition("=")
            action = self._option_string_actions.get(name) if word.startswith("-") else None
            if not isinstance(action, argparse._StoreAction):
                continue
            value_next = not equals and action.nargs is None
            if action in seen:
                several = ", with several values comma-separated" if "comma" in (action.help or "") else ""
                self.error(f"{name} is given twice (the second would replace the first); give it once{several}")
            seen.add(action)

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see {self.prog} --help)", ExitCode.USAGE)

    def _print_message(self, message: str, file: Any = None) -> None:
        print_help_text(message, file)


def flag_type(parse: Any) -> Any:
    """A settings parser (``ValueError`` with a readable reason) as an argparse type."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def serve_flag_type(name: str) -> Any:
    """``flag_type`` of a parser in ``serve.options``, imported when the flag is given: the
    serve options are not imported on every start (issue 40: launch to first rows)."""

    def parse(text: str) -> Any:
        from ..serve import options

        return getattr(options, name)(text)

    parse.__name__ = name
    return flag_type(parse)


def version_text() -> str:
    try:
        from importlib.metadata import version

        own = version("monque-tui")
    except Exception:  # noqa: BLE001 - not installed as a distribution (e.g. run from a checkout)
        own = engine_version
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"{PROG} {own} (monque_engine {engine_version}, Python {python})"


class _VersionOnRequest(argparse._VersionAction):
    """``--version``, its text worked out only when asked for: ``version_text`` imports
    ``importlib.metadata`` and reads the installed distributions (~15 ms), which every
    start of the console paid while building the parser (issue 40: launch to first rows)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        self.version = version_text()
        super().__call__(parser, *args, **kwargs)


# -- options the two forms share: each written once ----------------------------------------------
def add_store_url(parser: argparse._ActionsContainer, help_text: str, dest: str = "url") -> None:
    """The store URL, the last positional of every form (``monque-tui export sqlite:///jobs.db``)."""
    parser.add_argument(dest, nargs="?", default=None, metavar="URL", help=help_text)


def add_setting(parser: argparse._ActionsContainer, option: Option) -> None:
    """One setting of ``settings.OPTIONS`` as a flag; ``None`` (or ``False``) means "not given",
    so ``settings.resolve_option`` can fall back to its environment variable, then its default."""
    help_text = f"{option.help} [env: {option.env}]"
    if option.is_switch:
        parser.add_argument(option.flag, dest=option.dest, action="store_true", default=False, help=help_text)
        return
    parser.add_argument(
        option.flag,
        dest=option.dest,
        type=flag_type(option.parse),
        default=None,
        metavar=option.metavar,
        help=help_text,
    )


def add_collection(parser: argparse._ActionsContainer) -> None:
    parser.add_argument(
        "--collection",
        default="monque_jobs",
        metavar="NAME",
        help="jobs collection (table) name [default: monque_jobs]",
    )


def _store_flags(parser: argparse.ArgumentParser) -> None:
    """What every command takes to find its store: the URL last (or ``--url``), the collection,
    and ``--connect-timeout`` (the console's setting: the same flag, variable and bounds)."""
    add_store_url(parser, "store URL (or --url URL)", dest="store_url")
    parser.add_argument(
        "--url", default=None, metavar="URL", help=f"store URL [env: MONQUE_URL] [default: {DEFAULT_URL}]"
    )
    add_collection(parser)
    add_setting(parser, OPTIONS_BY_DEST["connect_timeout"])


# -- argument types of the commands -----------------------------------------------------------------
def _statuses(text: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [value for value in values if value not in STATUSES]
    if unknown or not values:
        raise argparse.ArgumentTypeError(f"{text!r}: use one or more of {', '.join(STATUSES)}, comma-separated")
    return values


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


# -- the root: the console and its modes --------------------------------------------------------------
def _add_modes(parser: CliParser) -> None:
    add_store_url(
        parser,
        "store URL: sqlite:///relative.db, sqlite:////absolute/path.db, mongodb://host/db "
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
        help="demo handlers and a stream of demo jobs on a local SQLite file, in the console (a URL given must "
        "name a new store or a demo's own: one holding other jobs is refused)",
    )
    exclusive.add_argument(
        "--serve",
        metavar="[HOST:]PORT",
        type=serve_flag_type("parse_address"),
        default=None,
        help="serve the console to browsers on HOST:PORT (HOST defaults to 127.0.0.1); every request needs "
        f"the token ({TOKEN_ENV} or {TOKEN_FILE_ENV}; browsers log in with the one-time link printed at start); "
        "also answers the management HTTP API under /api/v1 and /api/x/v1 (Bearer token); needs monque-tui[serve]",
    )
    modes.add_argument(
        "--headless", action="store_true", help="with --demo: run the demo without the console, printing progress lines"
    )
    modes.add_argument("--version", action=_VersionOnRequest, version="")
    serving = parser.add_argument_group("with --serve (the token is never a flag: ps would show it)")
    serving.add_argument(
        "--public-url",
        metavar="URL",
        type=serve_flag_type("parse_public_url"),
        default=None,
        help="the origin browsers use, behind a reverse proxy (e.g. https://jobs.example.com) "
        "[default: http://HOST:PORT]",
    )
    serving.add_argument(
        "--max-sessions",
        metavar="N",
        type=flag_type(parse_positive_int),
        default=None,
        help=f"browser sessions at once; each runs a console process [default: {DEFAULT_MAX_SESSIONS}]",
    )
    serving.add_argument(
        "--session-lifetime",
        metavar="DURATION",
        type=serve_flag_type("parse_session_lifetime"),
        default=None,
        help=f"how long a browser's login lasts, e.g. 30m, 12h, 7d [env: {SESSION_LIFETIME_ENV}; default: 12h]",
    )
    serving.add_argument(
        "--token-file",
        metavar="PATH",
        default=None,
        help=f"read the token from the first line of PATH [env: {TOKEN_FILE_ENV}; or the token itself in "
        f"{TOKEN_ENV}; default: a random one, never printed: browsers use the one-time login link]",
    )
    # Refused with its own message, or argparse would read `--token X` as `--token-file X`.
    serving.add_argument("--token", dest="token_flag", default=None, help=argparse.SUPPRESS)
    options = parser.add_argument_group("settings (each also from an environment variable)")
    for option in OPTIONS:
        add_setting(options, option)


# -- the commands -------------------------------------------------------------------------------------
class Command(NamedTuple):
    """One command: how the root's --help lists it, and its own flags (``add``)."""

    synopsis: str
    summary: str
    description: str
    add: Callable[[CliParser], None]


def _pause(p: CliParser) -> None:
    p.add_argument("name", metavar="NAME", help="the job name to pause, exactly as jobs carry it (no glob)")
    p.add_argument(
        "--force",
        action="store_true",
        help="pause NAME even though no job and no registered worker uses it (a name not yet in use)",
    )


def _name(p: CliParser) -> None:
    p.add_argument("name", metavar="NAME", help="the paused job name to resume (monque-tui paused lists them)")


def _json(p: CliParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")


def _release_dead(p: CliParser) -> None:
    p.add_argument("instance", metavar="INSTANCE")
    p.add_argument("--yes", action="store_true", help="release without asking (otherwise only the count is shown)")


def _health(p: CliParser) -> None:
    p.add_argument(
        "--window",
        type=_window,
        default=60,
        metavar="MINUTES",
        help=f"minutes of completed/failed counts to sum, 1 to {MAX_WINDOW_MINUTES} [default: 60]",
    )
    _json(p)


def _export(p: CliParser) -> None:
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


def _bulk(action: str) -> Callable[[CliParser], None]:
    def add(p: CliParser) -> None:
        add_filter_flags(p, _statuses)
        p.add_argument("--yes", action="store_true", help=f"{action} the counted jobs (else only count them)")
        if action == "cancel":
            p.add_argument(
                "--running",
                action="store_true",
                help="also stop the matching running (processing) jobs: each owner cancels the handler and "
                "ends the job cancelled; jobs of owners not in the instance registry (Node, older Python) "
                "or dead are named and left alone",
            )
        p.add_argument(
            "--all",
            action="store_true",
            help="every job: required when no flag narrows the selection (none given, or a glob such as '*')",
        )

    return add


def _migrate(p: CliParser) -> None:
    p.add_argument("--retention", action="store_true", help="also the retention index (for workers with job_retention)")


def _check(p: CliParser) -> None:
    p.add_argument(
        "--retention",
        action="store_true",
        help="require the retention index too (workers with job_retention)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per check (verdict, check, text, fix)")


def _nothing(p: CliParser) -> None:
    pass


def _bulk_command(action: str, verb: str, reach: str) -> Command:
    return Command(
        "FILTER [--yes]",
        f"{action} every matching job ({reach}); counts first, acts only with --yes",
        f"{verb} every job the filter matches ({reach}), on SQLite 1,000 jobs a transaction (stopped part way, "
        "the ones it reached stay changed and the stop line says how many). "
        "The jobs are counted first and the count printed; with --yes the action then reaches "
        "only jobs that count saw and that have not changed since: never more than counted, "
        "whatever other processes commit meanwhile. Without --yes nothing changes.",
        _bulk(action),
    )


#: Every command, in the order the root's --help lists them. A command's parser is built only
#: when its command line is parsed (the console and the worker never build the twelve).
COMMANDS_DEFINED: dict[str, Command] = {
    "pause": Command(
        "NAME [--force]",
        "stop every Python worker claiming NAME (running jobs finish)",
        "Pause claiming of one job name, stored in the store: every Python "
        "worker stops claiming it within its poll interval; running jobs finish. "
        "Node Monque workers do not honour it.",
        _pause,
    ),
    "resume": Command("NAME", "let workers claim NAME again", "Resume a paused job name.", _name),
    "paused": Command(
        "[--json]", "list paused job names", "Print each paused name and since when (tab-separated).", _json
    ),
    "instances": Command(
        "[--json]",
        "list scheduler instances (registered and inferred), alive or dead",
        "Print every instance the store knows of: id, kind (registered or "
        "inferred from processing jobs, e.g. Node workers), alive or dead, jobs "
        "held, heartbeat age, host:pid, processed and failed counts.",
        _json,
    ),
    "release-dead": Command(
        "INSTANCE [--yes]",
        "return a dead instance's processing jobs to pending now",
        "Count, and with --yes release, the processing jobs of an instance whose "
        "heartbeat stopped: it is watched for twice its heartbeat interval plus 1 s (by this "
        "machine's monotonic clock, never its wall clock) and is dead only if nothing of it moved. "
        "The store writes only if nothing moved since: a live instance's jobs are never released.",
        _release_dead,
    ),
    "health": Command(
        "[--window MINUTES] [--json]",
        "per job name: due, scheduled, latency, completed/failed per minute",
        "Queue health per job name, from the jobs and the per-minute counters Python workers keep in the store (48 h).",
        _health,
    ),
    "export": Command(
        "FILTER [--format jsonl|csv] [--output FILE|-]",
        "write every matching job to JSON Lines or CSV",
        "Stream every job matching the filters to JSON Lines or CSV (camelCase "
        "fields, _id as 24-hex, instants ISO-8601 UTC), in constant memory; "
        f"progress on stderr from {PROGRESS_FROM} jobs (the first page, then at most one line a second).",
        _export,
    ),
    "cancel": _bulk_command("cancel", "Cancel", "pending jobs; with --running, running ones too"),
    "retry": _bulk_command("retry", "Retry", "failed and cancelled jobs"),
    "delete": _bulk_command("delete", "Delete", "jobs of any status"),
    "repair-counts": Command(
        "",
        "recount the SQLite store's kept job counts from the jobs (after a hand edit)",
        "Counts, stats and the console's tabs read per-name, per-status counts (and its errors "
        "view per-error-group counts) that the SQLite store keeps in the same transaction as every "
        "change. Only a row changed outside "
        "the store (e.g. in the sqlite3 shell) can make them drift; this recounts them from the "
        "job table in one write transaction and prints what differed. MongoDB keeps no counts.",
        _nothing,
    ),
    "migrate": Command(
        "[--retention]",
        "build the jobs collection's missing indexes (MongoDB) before a deploy, with progress",
        "Build every index Monque declares that the jobs collection lacks, one at a "
        "time, each reported on stderr, with no deadline. Run it once before deploying workers "
        "onto a large existing collection: workers do not build indexes there (a missing "
        "unique-key index makes them refuse to start). SQLite builds its own when opened.",
        _migrate,
    ),
    "check": Command(
        "[--retention] [--json]",
        "check a MongoDB cluster before a deploy: version, topology, lag, clock, oplog, indexes, owners",
        "A doctor to run against your own cluster before a deploy. One line per check, "
        "each ok, warn or fail with what to do: the server's version and topology (replica set "
        "members and their lag); whether a change stream and a transaction work, tried on a "
        "temporary collection it creates and drops; the indexes present against the ones Monque "
        "requires, with the collection's size (what migrate would build on how much data); the "
        "clock skew between this machine and the server; the oplog window, where this user may "
        "read it; owners of processing jobs missing from the instance registry (Node Monque "
        "workers, likely), with the mixed-fleet rule (Node's lockTimeout must exceed the longest "
        "Python job). Reads only, besides that one temporary collection; passwords masked. "
        "Exit 0 when nothing fails (warnings allowed), 6 when a check fails, 3 when the server "
        "cannot be reached, 2 for a bad URL or flag. On a SQLite URL it reads the file's header "
        "only and says which checks are MongoDB's.",
        _check,
    ),
}
COMMANDS = tuple(COMMANDS_DEFINED)


def _commands_help() -> str:
    """The root --help's commands section, from the commands' own definitions."""
    lines = [
        "commands (for scripts; each takes the store URL last or as --url URL, default $MONQUE_URL,",
        "and --help for its options):",
    ]
    for name, command in COMMANDS_DEFINED.items():
        lines.append(f"  {PROG} {name} {command.synopsis}".rstrip())
        lines += textwrap.wrap(command.summary, width=88, initial_indent="      ", subsequent_indent="      ")
    return "\n".join(lines) + "\n" + COMMANDS_FOOTER


# -- building and parsing ---------------------------------------------------------------------------------
def build_parser() -> CliParser:
    """The root parser: the console's form, its --help listing every command (``parse`` routes
    a command line to its command's own parser)."""
    root = CliParser(
        prog=PROG,
        usage=f"{PROG} [OPTIONS] [URL]\n       {PROG} COMMAND [OPTIONS] [URL]   (the commands are listed below)",
        description=textwrap.dedent("""\
            A terminal console and headless worker for Monque job queues (SQLite or MongoDB).
            Watch jobs live, and cancel, retry, reschedule or delete them; or run the
            processor pool of your handlers without a UI."""),
        epilog=EXAMPLES + "\n" + _commands_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_modes(root)
    return root


def command_parser(name: str) -> CliParser:
    """Command ``name``'s parser: its own flags, then what every command takes to find its store."""
    command = COMMANDS_DEFINED[name]
    parser = CliParser(prog=f"{PROG} {name}", description=command.description)
    command.add(parser)
    _store_flags(parser)
    return parser


def parse(words: list[str]) -> argparse.Namespace:
    """Parse a whole command line; ``args.command`` is the command's name, or None for the console's form.

    ``--help`` and ``--version`` print and raise ``SystemExit`` (0); every usage error is a
    ``CliError`` (exit 2).
    """
    if words and words[0] in COMMANDS_DEFINED:
        return _parse_command(words[0], words[1:])
    root = build_parser()
    root.refuse_repeats(words)
    args = root.parse_args(words)
    _refuse_empty_url(args.url, "the store URL")
    if args.url in COMMANDS_DEFINED:
        raise CliError(
            f"{args.url!r} is a command, not a store URL: put it first ({PROG} {args.url} ... [URL]; "
            f"see {PROG} {args.url} --help)",
            ExitCode.USAGE,
        )
    args.command = None
    return args


def parse_command(words: list[str]) -> argparse.Namespace:
    """``COMMAND ARGS…`` (the first word must be a command)."""
    args = parse(words)
    if args.command is None:
        raise CliError(f"expected a command first ({', '.join(COMMANDS)}); see {PROG} --help", ExitCode.USAGE)
    return args


def _parse_command(name: str, words: list[str]) -> argparse.Namespace:
    """A command's options anywhere among its positionals.

    ``release-dead worker-7 --yes sqlite:///jobs.db`` and ``pause NAME --collection c URL``
    were "unrecognized arguments: sqlite:///jobs.db": argparse fills NAME and the optional
    URL from the first run of positionals, so a URL after a flag had no slot left (probe 7).
    """
    parser = command_parser(name)
    words = join_dashed_values(words)
    parser.refuse_repeats(words)
    args, extra = parser.parse_known_intermixed_args(words)
    _refuse_empty_url(args.store_url, "the store URL")
    _refuse_empty_url(args.url, "--url")
    _refuse_stray_word(name, args.store_url, [*extra, args.url or ""])
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.command = name
    return args


def _refuse_empty_url(value: str | None, what: str) -> None:
    """A store URL given empty (``monque-tui --worker "$DB_URL"`` with the variable unset) is
    an error, not "no URL": it was read as unset and fell back to ./monque.db, so a worker
    started on a new empty file and ``delete --all --yes ""`` reached whatever ./monque.db
    held (probe-cli). An empty MONQUE_URL still means unset, as every empty variable does."""
    if value is not None and not value.strip():
        raise CliError(
            f"{what} given is empty (an unset shell variable?); give a URL such as sqlite:///jobs.db, or leave "
            "it out to use MONQUE_URL or the default",
            ExitCode.USAGE,
        )


#: The commands whose selection is made of flags only (the filter bar's).
_FILTER_COMMANDS = frozenset({"export", "cancel", "retry", "delete"})


def _looks_like_a_path(word: str) -> bool:
    """A bare file path where a URL belongs (``jobs.db``): ``check_url`` suggests ``sqlite:///``."""
    return word.endswith((".db", ".sqlite", ".sqlite3")) or "/" in word


def _refuse_stray_word(name: str, word: str | None, extra: list[str]) -> None:
    """A word argparse took for the store URL that is none (no scheme), said as what it is.

    ``export failed sqlite:///jobs.db`` and ``release-dead a b sqlite:///jobs.db`` read
    "unrecognized arguments: sqlite:///jobs.db", blaming the one right word; ``delete
    bulk.0 --yes`` (URL from MONQUE_URL) read "Store URL 'bulk.0' has no scheme" (probe-cli).
    """
    if word is None or "://" in word:
        return
    before_url = any("://" in other for other in extra)  # the URL came after it (or as --url URL)
    if not before_url and (name not in _FILTER_COMMANDS or _looks_like_a_path(word)):
        return  # the store URL's place: check_url says what is wrong with it (a bare path, a typo)
    command = COMMANDS_DEFINED[name]
    if name in _FILTER_COMMANDS:
        hint = f"a filter is a flag, e.g. --{'status' if word in STATUSES else 'name'} {word}"
    else:
        hint = f"it takes {PROG} {name} {command.synopsis} [URL]".replace("  ", " ")
    raise CliError(f"{name}: unexpected argument {word!r}: {hint} (see {PROG} {name} --help)", ExitCode.USAGE)


__all__ = [
    "COMMANDS",
    "COMMANDS_DEFINED",
    "PROG",
    "CliParser",
    "Command",
    "add_collection",
    "add_setting",
    "add_store_url",
    "build_parser",
    "command_parser",
    "flag_type",
    "parse",
    "parse_command",
    "version_text",
]
