"""Every command-line option, its environment variable and its default, in one table.

One table keeps ``--help``, the environment and the precedence rule (flag, then
environment, then default) from drifting apart: the parser and the resolver both read it.
Parsers raise ``ValueError`` with a message that reads well after "MONQUE_X=...:" or
"--x ...:", so a bad value in either place gets the same one-line explanation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from monque_engine import DEFAULT_URL

from ..common.exitcodes import CliError, ExitCode
from ..common.listen import parse_listen_address

DEMO_URL = "sqlite:///monque-demo.db"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError("expected one of 1/0, true/false, yes/no, on/off")


#: The engine's bounds (``monque_engine.options.MAX_COUNT`` and ``MAX_SECONDS``; a test holds
#: them equal), checked here so that a value past them is refused naming the flag or variable
#: that gave it: the engine's refusal named its own option ("Option worker_concurrency must
#: be ...", "Option poll_interval ..."), which no flag is called. Not imported: parsing
#: imports no engine module beyond the package's names.
MAX_COUNT = 2**31 - 1
MAX_SECONDS = 1_000_000_000.0


def parse_positive_int(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError("expected a whole number of at least 1") from None
    if value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def parse_count(text: str) -> int:
    """A positive count the engine takes (``--concurrency``): at most ``MAX_COUNT``."""
    value = parse_positive_int(text)
    if value > MAX_COUNT:
        raise ValueError(f"expected a whole number from 1 to {MAX_COUNT}")
    return value


#: ``--processes``' bound. Each process is a whole Python interpreter with its own store
#: connections, and the supervisor sets up every slot at start: ``--processes 99999999999``
#: grew the supervisor to the machine's whole memory before the kernel killed it (probe-cli).
#: 256 is well past the cores of one machine; beyond it run more machines or containers.
MAX_PROCESSES = 256


def parse_processes(text: str) -> int | str:
    """``--processes``: a whole number from 1 to ``MAX_PROCESSES``, or ``auto`` (one per core, settled at start)."""
    value = text.strip().lower()
    if value == "auto":
        return "auto"
    expected = f"expected a whole number from 1 to {MAX_PROCESSES}, or auto (one per core)"
    try:
        number = int(value)
    except ValueError:
        raise ValueError(expected) from None
    if not 1 <= number <= MAX_PROCESSES:
        raise ValueError(expected)
    return number


def parse_non_negative_int(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError("expected a whole number, 0 or more") from None
    if value < 0:
        raise ValueError("expected a whole number, 0 or more")
    return value


def parse_name_list(text: str) -> tuple[str, ...]:
    """``a,b,c``: job names, none blank, none holding a control character."""
    names = tuple(part.strip() for part in text.split(","))
    if not text.strip() or any(not name for name in names):
        raise ValueError("expected job names separated by commas, none empty, e.g. email.send,report.build")
    if any(any(ord(char) < 32 or ord(char) == 127 for char in name) for name in names):
        raise ValueError("a job name may not hold a control character")
    return tuple(dict.fromkeys(names))


def _seconds(text: str, *, allow_zero: bool) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected a number of seconds, e.g. 2 or 0.5") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("expected a finite number of seconds")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError("expected a number of seconds above 0" if not allow_zero else "expected 0 or more seconds")
    return value


def parse_positive_seconds(text: str) -> float:
    return _seconds(text, allow_zero=False)


def _engine_seconds(text: str, *, allow_zero: bool) -> float:
    value = _seconds(text, allow_zero=allow_zero)
    if value > MAX_SECONDS:
        raise ValueError(f"expected at most {MAX_SECONDS:,.0f} seconds (about 31 years)")
    return value


def parse_engine_positive_seconds(text: str) -> float:
    """An interval the engine takes (``--poll-interval``, ``--lock-timeout``): above 0, at most ``MAX_SECONDS``."""
    return _engine_seconds(text, allow_zero=False)


def parse_engine_seconds(text: str) -> float:
    """``--shutdown-timeout``: 0 or more, at most ``MAX_SECONDS``."""
    return _engine_seconds(text, allow_zero=True)


#: ``--connect-timeout``'s bound: PyMongo refuses a server-selection timeout of a billion ms,
#: and the refusal read "Invalid MongoDB URL …" about a URL that was fine (probe 7).
MAX_CONNECT_TIMEOUT = 86_400.0


def parse_connect_timeout(text: str) -> float:
    value = _seconds(text, allow_zero=False)
    if value > MAX_CONNECT_TIMEOUT:
        raise ValueError(f"expected at most {MAX_CONNECT_TIMEOUT:,.0f} seconds (a day)")
    return value


#: ``--timeout``'s bound: the engine's (``monque_engine.timeouts.MAX_TIMEOUT_SECONDS``, 30 days;
#: a test holds them equal). Not imported from there: parsing imports no engine.
MAX_JOB_TIMEOUT = 30 * 86_400


def parse_job_timeout(text: str) -> float:
    value = _seconds(text, allow_zero=False)
    if value > MAX_JOB_TIMEOUT:
        raise ValueError(f"expected at most {MAX_JOB_TIMEOUT} seconds (30 days)")
    if round(value * 1000) < 1:
        raise ValueError("expected at least 0.001 seconds")
    return value


def parse_seconds(text: str) -> float:
    return _seconds(text, allow_zero=True)


def parse_choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return value

    return parse


def parse_text(text: str) -> str:
    value = text.strip()
    if not value:
        raise ValueError("expected a non-empty value")
    return value


#: ``--read-preference`` values (monque_engine.store.mongo.read_preference.MODES).
READ_PREFERENCES = ("primary", "secondaryPreferred")


def parse_read_preference(text: str) -> str:
    value = text.strip()
    if value not in READ_PREFERENCES:
        raise ValueError(f"expected {' or '.join(READ_PREFERENCES)}")
    return value


class Option(NamedTuple):
    """One setting: where it comes from and, for engine options, which ``Monque`` option it sets."""

    dest: str
    flag: str
    env: str
    parse: Callable[[str], Any]
    default: Any
    metavar: str | None
    help: str
    #: The ``Monque(**options)`` keyword this feeds, if any.
    engine_option: str | None = None
    is_switch: bool = False


OPTIONS: tuple[Option, ...] = (
    Option(
        "app",
        "--app",
        "MONQUE_APP",
        parse_text,
        None,
        "PACKAGE.MODULE:ATTR",
        "your handlers: ATTR is a Monque instance with handlers registered, or a function "
        "(sync or async) that takes a Monque and registers them; with the console, workers run in-process",
    ),
    Option(
        "read_only",
        "--read-only",
        "MONQUE_READ_ONLY",
        parse_bool,
        False,
        None,
        "console: open the store read-only (SQLite: never creates or changes the file) and disable "
        "cancel/retry/reschedule/delete",
        is_switch=True,
    ),
    Option(
        "read_preference",
        "--read-preference",
        "MONQUE_READ_PREFERENCE",
        parse_read_preference,
        "primary",
        "MODE",
        "console on MongoDB: where listings, counts and statistics are read: primary (the default) or "
        "secondaryPreferred (a secondary within 90 s of the primary when one is up, off the workers' primary; "
        "the header shows how far behind it is)",
    ),
    Option(
        "log_level",
        "--log-level",
        "MONQUE_LOG_LEVEL",
        parse_choice("debug", "info", "warning", "error"),
        "info",
        "LEVEL",
        "debug, info, warning or error (job:start lines are debug) [default: info]",
    ),
    Option(
        "log_format",
        "--log-format",
        "MONQUE_LOG_FORMAT",
        parse_choice("text", "json"),
        "text",
        "FORMAT",
        "text (rich, for people) or json (one object per line, for log collectors) [default: text]",
    ),
    Option(
        "concurrency",
        "--concurrency",
        "MONQUE_CONCURRENCY",
        parse_count,
        None,
        "N",
        "jobs run at once per job name, unless a handler sets its own [default: engine's, 5]",
        engine_option="worker_concurrency",
    ),
    Option(
        "processes",
        "--processes",
        "MONQUE_PROCESSES",
        parse_processes,
        None,
        "N|auto",
        f"worker: run N worker processes (1 to {MAX_PROCESSES}) under a supervisor (auto: one per core), each "
        "with its own instance id "
        "and the registered concurrency; a process that dies is restarted; one --metrics endpoint for the group "
        "[default: one process, no supervisor]",
    ),
    Option(
        "timeout",
        "--timeout",
        "MONQUE_TIMEOUT",
        parse_job_timeout,
        None,
        "SECONDS",
        "time limit of each job run, unless a handler or the job sets its own; an async handler is cancelled, "
        "a sync one keeps its job until it returns; the attempt is timed_out, then retried as any failure "
        "[default: none; set one]",
        engine_option="job_timeout",
    ),
    Option(
        "instance_id",
        "--instance-id",
        "MONQUE_INSTANCE_ID",
        parse_text,
        None,
        "ID",
        "owner id written on claimed jobs; unique per process [default: host:pid:random]",
        engine_option="scheduler_instance_id",
    ),
    Option(
        "poll_interval",
        "--poll-interval",
        "MONQUE_POLL_INTERVAL",
        parse_engine_positive_seconds,
        None,
        "SECONDS",
        "how often to look for due jobs when the change feed is down [default: 1]",
        engine_option="poll_interval",
    ),
    Option(
        "lock_timeout",
        "--lock-timeout",
        "MONQUE_LOCK_TIMEOUT",
        parse_engine_positive_seconds,
        None,
        "SECONDS",
        "a processing job whose owner has sent no heartbeat for this long is stale and returns to pending [default: 1800]",
        engine_option="lock_timeout",
    ),
    Option(
        "shutdown_timeout",
        "--shutdown-timeout",
        "MONQUE_SHUTDOWN_TIMEOUT",
        parse_engine_seconds,
        None,
        "SECONDS",
        "on SIGINT/SIGTERM/SIGHUP, how long in-flight jobs may take to finish [default: 30]",
        engine_option="shutdown_timeout",
    ),
    Option(
        "summary_interval",
        "--summary-interval",
        "MONQUE_SUMMARY_INTERVAL",
        parse_seconds,
        None,
        "SECONDS",
        "worker/headless: seconds between summary lines, 0 for none [default: 30; demo 2]",
    ),
    Option(
        "duration",
        "--duration",
        "MONQUE_DURATION",
        parse_seconds,
        None,
        "SECONDS",
        "worker/headless: stop cleanly after this long, 0 to run until a signal "
        "[default: until a signal; demo --headless 15]",
    ),
    Option(
        "metrics",
        "--metrics",
        "MONQUE_METRICS",
        parse_listen_address,
        None,
        "[HOST:]PORT",
        "worker/headless: serve Prometheus metrics at http://HOST:PORT/metrics, HOST 127.0.0.1 unless given; "
        "needs pip install 'monque-tui[metrics]' [default: off]",
    ),
    Option(
        "metrics_max_names",
        "--metrics-max-names",
        "MONQUE_METRICS_MAX_NAMES",
        parse_non_negative_int,
        None,
        "N",
        "with --metrics: the first N job names seen get series of their own, the rest are summed "
        'under name="other" [default: 100]',
    ),
    Option(
        "metrics_names",
        "--metrics-names",
        "MONQUE_METRICS_NAMES",
        parse_name_list,
        None,
        "NAME,...",
        "with --metrics: exactly these job names get series of their own, the rest are summed "
        'under name="other" (instead of --metrics-max-names) [default: the first names seen]',
    ),
    Option(
        "allow_remote",
        "--allow-remote",
        "MONQUE_ALLOW_REMOTE",
        parse_bool,
        False,
        None,
        "let --serve or --metrics listen on an address other than loopback "
        "(put a TLS reverse proxy in front of --serve)",
        is_switch=True,
    ),
    Option(
        "connect_timeout",
        "--connect-timeout",
        "MONQUE_CONNECT_TIMEOUT",
        parse_connect_timeout,
        5.0,
        "SECONDS",
        "how long to wait for MongoDB when checking the URL [default: 5]",
    ),
)

OPTIONS_BY_DEST: dict[str, Option] = {option.dest: option for option in OPTIONS}


@dataclass(frozen=True, slots=True)
class Resolved:
    """Settled values plus where each came from, so modes can reject what does not apply."""

    values: dict[str, Any]
    #: dest -> "flag" or "env" for values the user gave; defaults are absent.
    sources: dict[str, str]

    def __getitem__(self, dest: str) -> Any:
        return self.values[dest]

    def given(self, dest: str) -> bool:
        return dest in self.sources

    def origin(self, dest: str) -> str:
        """How to name the setting in a message: the flag or the environment variable."""
        option = OPTIONS_BY_DEST.get(dest)
        if dest == "url":
            return "URL" if self.sources.get(dest) == "flag" else "MONQUE_URL"
        if option is None:
            return dest
        return option.flag if self.sources.get(dest) == "flag" else option.env

    def engine_options(self) -> dict[str, Any]:
        """Only the engine options the user set: otherwise the engine's own defaults apply."""
        return {
            option.engine_option: self.values[option.dest]
            for option in OPTIONS
            if option.engine_option is not None and self.given(option.dest)
        }


def resolve_option(option: Option, flag_value: Any, env: Mapping[str, str]) -> tuple[Any, str | None]:
    """One option by the precedence rule; its value and "flag", "env" or None (the default).

    The commands (``monque-tui export`` …) take their few shared options through it too, so a
    variable set for the console means the same there.
    """
    if flag_value is not None and not (option.is_switch and flag_value is False):
        return flag_value, "flag"
    raw = env.get(option.env)
    if raw is not None and raw.strip() != "":
        try:
            return option.parse(raw), "env"
        except ValueError as error:
            raise CliError(f"{option.env}={raw!r}: {error}", ExitCode.USAGE) from None
    return option.default, None


def resolve(flags: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Resolved:
    """Apply the precedence rule: flag, then environment, then default.

    ``flags`` holds argparse's values, where ``None`` (or ``False`` for switches) means
    "not on the command line".
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for option in OPTIONS:
        values[option.dest], source = resolve_option(option, flags.get(option.dest), env)
        if source is not None:
            sources[option.dest] = source
    url_flag = flags.get("url")
    if url_flag:
        values["url"], sources["url"] = url_flag, "flag"
    elif env.get("MONQUE_URL", "").strip():
        values["url"], sources["url"] = env["MONQUE_URL"].strip(), "env"
    else:
        values["url"] = DEFAULT_URL
    return Resolved(values, sources)
