"""The console filter bar's language, for the commands that take a filter (``export``,
``cancel``, ``retry``, ``delete``).

The filter bar is the reference: a name or a glob (``email*``), an id (its start, or 4+ of
the 8 characters the table shows) or unique key, "contains" text over payload and error,
time ranges (``created -2h..``, ``next now..+1h``, resolved once against the clock), a status
and an error group. Everything here goes through ``query.JobQuery`` and ``query.parse_ranges``,
the bar's own parser and predicate, so a command and the console mean the same by each flag.
Before this, ``export --search`` meant id or key (not contains), ``--name 'ops.*'`` exported
0 jobs in silence and ``--created-from -2h`` failed with "expected one argument".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from monque_engine import InvalidJobQueryError, JobListFilter, Monque, MonqueError
from monque_engine.payload_filter import EXAMPLE, DataTerm, check_terms
from monque_engine.scheduler.selectors import to_store_filter
from monque_engine.selector_rules import check_filter_value, selects_every_job
from monque_engine.validation import validate_job_name

from ..common.error_groups import group_label
from ..common.exitcodes import CliError, ExitCode
from ..common.streams import write_stderr
from ..console.query import RANGE_EXAMPLE, SORT_LABELS, JobQuery, RangeError, TimeRange, is_glob, parse_ranges

if TYPE_CHECKING:
    from monque_engine.errorgroups import ErrorGroup

#: Flags whose value may start with "-" (a relative time): ``--created -2h..`` is read as
#: ``--created=-2h..`` before argparse sees it (it took "-2h" for an option).
DASHED_VALUE_FLAGS = frozenset(
    {
        "--created",
        "--updated",
        "--next-run",
        "--created-from",
        "--created-to",
        "--updated-from",
        "--updated-to",
        "--next-run-from",
        "--next-run-to",
        "--when",
    }
)
_FIELDS = (("created", "created_at"), ("updated", "updated_at"), ("next-run", "next_run_at"))


def join_dashed_values(words: list[str]) -> list[str]:
    """``--created -2h..`` → ``--created=-2h..`` (any value after these flags, dash or not)."""
    joined: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in DASHED_VALUE_FLAGS and index + 1 < len(words):
            joined.append(f"{word}={words[index + 1]}")
            index += 2
            continue
        joined.append(word)
        index += 1
    return joined


def add_filter_flags(parser: argparse.ArgumentParser, statuses: Callable[[str], list[str]]) -> None:
    """The filter bar's fields as flags (``statuses``: the ``--status`` type)."""
    group = parser.add_argument_group(
        "filter (the console's filter bar language)",
        "A flag that is given must filter: an empty or blank value, or one with a control character, is an "
        "error (exit 2); leave the flag out instead.",
    )
    group.add_argument("--name", default=None, help="a job name, or a glob such as 'email*' or 'report-?'")
    group.add_argument(
        "--status", type=statuses, default=None, metavar="STATUS[,STATUS]", help="only these statuses (comma-separated)"
    )
    by_id = group.add_mutually_exclusive_group()
    by_id.add_argument(
        "--id",
        dest="id",
        default=None,
        metavar="ID",
        help="one job: its id, the id's start, 4+ of the 8 characters the console shows, or its unique key "
        "(a substring); cancel, retry and delete refuse an --id that matches more than one job",
    )
    by_id.add_argument(
        "--search",
        dest="search",
        default=None,
        metavar="TEXT",
        help="every job whose id starts with TEXT or whose shown id (4+ characters) or unique key holds it",
    )
    group.add_argument(
        "--contains", default=None, metavar="TEXT", help="payload or error text (type or message), ASCII case ignored"
    )
    group.add_argument(
        "--data",
        default=None,
        metavar="TERMS",
        help=(
            "payload terms, comma-separated: data.KEY missing, data.KEY exists, data.KEY = VALUE (JSON types: 5 "
            f"equals 5.0, \"5\" is a string; null is present and null), e.g. '{EXAMPLE}'"
        ),
    )
    group.add_argument(
        "--when", default=None, metavar="RANGES", help=f"time ranges as in the filter bar, e.g. '{RANGE_EXAMPLE}'"
    )
    for flag, _field in _FIELDS:
        words = flag.replace("-", " ")
        group.add_argument(
            f"--{flag}", default=None, metavar="FROM..TO", help=f"{words} in this range, e.g. -2h.., now..+1h, today"
        )
        group.add_argument(
            f"--{flag}-from", default=None, metavar="WHEN", help=f"{words} at or after (ISO, -2h, now, today)"
        )
        group.add_argument(f"--{flag}-to", default=None, metavar="WHEN", help=f"{words} at or before")
    group.add_argument(
        "--error-group",
        default=None,
        metavar="KEY|TEXT",
        help="an error group: its key, or text that names one group ('webhook ConnectTimeout')",
    )


def _ranges(args: argparse.Namespace, now_ms: int) -> tuple[TimeRange, ...]:
    """Every range flag, read by the bar's parser; one range per time, as in the bar."""
    found: dict[str, TimeRange] = {}

    def add(ranges: tuple[TimeRange, ...], flag: str) -> None:
        for time_range in ranges:
            if time_range.field in found:
                label = SORT_LABELS[time_range.field]
                raise CliError(f"{flag}: the {label} time is given twice; give one range per time", ExitCode.USAGE)
            found[time_range.field] = time_range

    def parse(text: str, flag: str) -> tuple[TimeRange, ...]:
        try:
            return parse_ranges(text, now_ms)
        except RangeError as error:
            raise CliError(f"{flag}: {error}", ExitCode.USAGE) from None

    if args.when is not None:  # given: not blank (check_flag_values), so it names a range
        add(parse(args.when, "--when"), "--when")
    for flag, field in _FIELDS:
        word = "next" if field == "next_run_at" else flag
        whole = getattr(args, flag.replace("-", "_"))
        low = getattr(args, f"{flag.replace('-', '_')}_from")
        high = getattr(args, f"{flag.replace('-', '_')}_to")
        if whole is not None and (low is not None or high is not None):
            raise CliError(f"--{flag}: give a range FROM..TO or --{flag}-from/--{flag}-to, not both", ExitCode.USAGE)
        if whole is not None:
            add(parse(f"{word} {whole}", f"--{flag}"), f"--{flag}")
        elif low is not None or high is not None:
            add(parse(f"{word} {low or ''}..{high or ''}", f"--{flag}-from/--{flag}-to"), f"--{flag}")
    return tuple(found.values())


async def _error_group(monque: Monque, text: str) -> tuple[str, str]:
    """The group ``text`` names (its key, or words found in "name type: pattern"): (key, label)."""
    groups = await monque.error_groups(limit=1000)
    for group in groups:
        if group.key == text:
            return group.key, _label(group)
    words = text.casefold().split()
    matches = [g for g in groups if g.key.startswith(text) or all(w in _label(g).casefold() for w in words)]
    if len(matches) == 1:
        return matches[0].key, _label(matches[0])
    if not matches:
        raise CliError(
            f"--error-group: no error group matches {text!r} ({len(groups)} groups now); "
            "give a group's key or words from its name, type and message",
            ExitCode.USAGE,
        )
    shown = "; ".join(f"{g.key}: {_label(g)}" for g in matches[:5])
    raise CliError(
        f"--error-group: {len(matches)} groups match {text!r}: {shown}; give more words or the key", ExitCode.USAGE
    )


def _label(group: ErrorGroup) -> str:
    """A real message beside the template (``group_label``): the words a user saw in the console match."""
    return group_label(group)


#: Every text-valued filter flag and where argparse keeps it; each is checked by the engine's
#: selector rule (``monque_engine.selector_rules``) before anything is read.
_TEXT_FLAGS = (
    ("--name", "name"),
    ("--id", "id"),
    ("--search", "search"),
    ("--contains", "contains"),
    ("--when", "when"),
    ("--error-group", "error_group"),
    *(
        (f"--{flag}{end}", f"{flag.replace('-', '_')}{end.replace('-', '_')}")
        for flag, _field in _FIELDS
        for end in ("", "-from", "-to")
    ),
)


def check_flag_values(args: argparse.Namespace) -> None:
    """The engine's rule for a selector, on every filter flag given: a flag that is given must
    filter. ``--contains ""``, ``--id " "`` or ``--error-group ''`` (an unset ``$PATTERN`` in
    a script) was read as no filter, so ``delete --contains "" --yes`` deleted every job."""
    for flag, dest in _TEXT_FLAGS:
        try:
            check_filter_value(
                getattr(args, dest, None),
                flag,
                f"leave {flag} out",
                as_typed=dest == "contains",
                trimmed=dest in ("id", "search"),
            )
        except InvalidJobQueryError as error:
            raise CliError(str(error), ExitCode.USAGE) from None


async def build_filter(
    monque: Monque, args: argparse.Namespace, now_ms: int, every_job: bool | None = None
) -> tuple[JobListFilter, str]:
    """The flags as one ``JobListFilter`` (through the bar's ``JobQuery``), and how the bar describes it.

    ``every_job``: for an action (``cancel``, ``retry``, ``delete``), whether the operator gave
    ``--all``; a filter that narrows nothing (no flag, or a name glob such as ``*`` that every
    name matches) is refused without it, before anything is said about the filter. ``None``
    for a read (``export``), which may cover every job."""
    check_flag_values(args)
    if args.name is not None and not is_glob(args.name):
        try:  # a name no job can have selected nothing, quietly
            validate_job_name(args.name)
        except MonqueError as error:
            raise CliError(f"--name: {error}", ExitCode.USAGE) from None
    ranges = _ranges(args, now_ms)
    data: tuple[DataTerm, ...] = ()
    if getattr(args, "data", None) is not None:
        try:
            data = check_terms(args.data, "--data") or ()
        except InvalidJobQueryError as error:
            raise CliError(f"--data: {error}", ExitCode.USAGE) from None
    group_key = group_label = None
    if args.error_group is not None:
        group_key, group_label = await _error_group(monque, args.error_group)
    query = JobQuery(
        name=args.name,
        search=args.id if args.id is not None else args.search,
        text=args.contains,
        error_group=group_key,
        group_label=group_label,
        data=data,
    ).with_ranges(ranges)
    listing = replace(query.list_filter(), status=args.status, recurring=getattr(args, "recurring", None))
    if every_job is False and selects_every_job(listing):
        raise CliError(
            f"{args.command}: {_no_filter(args.name, args.status)}: every job would be reached; give a filter (--name, "
            "--status, --id, --contains, --data, --created/--updated/--next-run, --when, --error-group) or --all to mean "
            "every job",
            ExitCode.USAGE,
        )
    try:  # everything the engine refuses (a glob too long), refused before the glob's names are said
        to_store_filter(listing)
    except InvalidJobQueryError as error:
        raise CliError(f"{args.command}: {error}", ExitCode.USAGE) from None
    if query.name_is_glob:
        names = [n for n in await monque.job_names() if query.name_matches(n)]
        # Said, not refused: a script may run before the first such job exists.
        write_stderr(
            f"--name {args.name!r} (a glob) matches {len(names)} job name(s)"
            + (
                f": {', '.join(names[:6])}" + (" …" if len(names) > 6 else "")
                if names
                else " (names are case-sensitive)"
            )
        )
    description = query.describe(now_ms)
    if args.status:
        description = description.replace("all", ",".join(args.status), 1)
    return listing, description


async def refuse_ambiguous_id(monque: Monque, args: argparse.Namespace, listing: JobListFilter) -> None:
    """``--id`` names one job: an action whose ``--id`` matches several is refused (exit 2),
    whatever ``--yes`` says. An ObjectId starts with its creation time, so ``delete --id 6b1
    --yes`` reached every job created in the same weeks; ``--search`` is the flag for "every
    job that matches". Two rows are read to tell; the count is taken only for the message."""
    if getattr(args, "id", None) is None:
        return
    page = await monque.get_jobs_with_cursor(limit=2, filter=listing, include_data=False)
    if len(page.jobs) < 2:
        return
    matching = await monque.count_jobs(listing)
    raise CliError(
        f"{args.command}: --id {args.id!r} matches {matching:,} jobs, and --id names one job; nothing changed: "
        f"give more of the id (a whole id is 24 hex characters), or use --search {args.id!r} to {args.command} "
        "every job that matches",
        ExitCode.USAGE,
    )


def _no_filter(name: str | None, statuses: list[str] | None) -> str:
    """Why a selection narrows nothing, in the flags' words."""
    reasons = []
    if name is not None and is_glob(name):
        reasons.append(f"--name {name!r} matches every job name")
    if statuses:
        reasons.append("--status names every status")
    if not reasons:
        return "no filter given"
    return " and ".join(reasons) + (", so they filter nothing" if len(reasons) > 1 else ", so it filters nothing")
