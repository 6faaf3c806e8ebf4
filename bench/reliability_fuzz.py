"""Scenario 6 of ``bench.reliability``: bad input, fuzzed with hypothesis, on a real SQLite file.

Every input the public API and the CLI take from outside is generated at random (job
names, unique keys, payloads, run_at, cron strings and time zones, cursors, selectors, job
ids, store URLs, command lines). Each call must either be accepted and round-trip
(``enqueue`` then ``get_job`` gives back the same name, key and data), or be refused with
the documented error type (a ``MonqueError`` subclass; exit code 2 for the CLI parser).
Anything else (a ``TypeError`` from deep inside, a ``UnicodeEncodeError`` from sqlite3, a
crash) is a violation, reported with hypothesis' shrunk example. Afterwards the file must
pass ``PRAGMA integrity_check`` and a worker process must still run a normal job.
"""

from __future__ import annotations

import asyncio
import math
import string
import sys
import traceback
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monque_engine import (
    InvalidCronError,
    InvalidCursorError,
    InvalidJobIdentifierError,
    JobListFilter,
    JobSelector,
    JobStateError,
    Monque,
    MonqueError,
)
from monque_engine.errors import InvalidJobQueryError, PayloadTooLargeError, PayloadValidationError
from monque_engine.job import JobSort
from tests.procs._common import sqlite_url

from .reliability_base import READY, Result, Workspace, enqueue_here, integrity

# -- strategies -------------------------------------------------------------------------------------
texts = (
    st.text(max_size=40)
    | st.text(alphabet=string.printable, max_size=300)
    | st.sampled_from(
        ["", " ", "a b", "tab\tname", "x" * 255, "x" * 256, "nul\x00", "é", "\ud800", "名前", "a\u2028b", "\x7f"]
    )
)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
json_keys = st.text(max_size=10) | st.integers(-5, 5) | st.sampled_from([True, None, 1.5])
payloads = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(json_keys, inner, max_size=5),
    max_leaves=25,
)
odd_payloads = st.sampled_from(
    [
        {1, 2},
        b"bytes",
        datetime(2024, 1, 1, tzinfo=UTC),
        object(),
        float("nan"),
        [float("inf")],
        {"k": float("-inf")},
        (1, 2),
        {"t": (1, "a")},
        complex(1, 2),
        Ellipsis,
    ]
)
statuses = st.sampled_from(["pending", "processing", "completed", "failed", "cancelled"])
status_args = (
    st.none() | statuses | st.lists(statuses | st.text(max_size=8), max_size=3) | st.text(max_size=10) | st.integers()
)
moments = st.none() | st.datetimes(timezones=st.just(UTC)) | st.datetimes() | st.text(max_size=5) | st.integers()
hexes = st.text(alphabet="0123456789abcdefABCDEF", min_size=20, max_size=28)
ids = texts | hexes | st.integers() | st.binary(max_size=24) | st.none() | st.lists(st.integers(), max_size=2)
cron_field = st.sampled_from(
    [
        "*",
        "*/5",
        "0",
        "59",
        "60",
        "1-5",
        "5-1",
        "1,2,3",
        "MON",
        "jan",
        "?",
        "L",
        "#",
        "-1",
        "*/0",
        "1/2",
        "",
        "31",
        "32",
        "7",
        "8",
    ]
)
crons = (
    st.lists(cron_field, min_size=0, max_size=7).map(" ".join)
    | st.sampled_from(
        [
            "@hourly",
            "@daily",
            "@weekly",
            "@monthly",
            "@yearly",
            "@annually",
            "@reboot",
            "@every 5m",
            "@",
            "* * * * * * *",
            "0 0 30 2 *",
        ]
    )
    | st.text(max_size=30)
)
zones = (
    st.none()
    | st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Mars/Olympus", "", "../etc", "+05:00"])
    | st.text(max_size=12)
)
url_heads = st.sampled_from(
    [
        "sqlite:///",
        "sqlite:////tmp/",
        "sqlite://",
        "SQLITE:///",
        "mongodb://",
        "mongodb+srv://",
        "redis://",
        "",
        "file:///",
        "sqlite:",
    ]
)
url_tails = st.text(alphabet=string.printable, max_size=40) | st.sampled_from(
    [
        "jobs.db?busy_timeout=abc",
        "jobs.db?synchronous=sometimes",
        "jobs.db?feed_retention=-1",
        "jobs.db?x=1",
        ":memory:",
        "jobs.db?busy_timeout=nan",
        "jobs.db?feed_interval_ms=inf",
        "u:p@host:99999/db",
        "@/db",
        "host/db?replicaSet=",
        "h:notaport/db",
        "%zz.db",
    ]
)
cli_flags = st.sampled_from(
    [
        "--worker",
        "--demo",
        "--headless",
        "--read-only",
        "--app",
        "--log-level",
        "--log-format",
        "--concurrency",
        "--instance-id",
        "--poll-interval",
        "--lock-timeout",
        "--shutdown-timeout",
        "--summary-interval",
        "--duration",
        "--connect-timeout",
        "--no-such-flag",
        "-x",
        "--",
    ]
)
cli_values = (
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "2.5",
            "nan",
            "inf",
            "1e999",
            "",
            " ",
            "debug",
            "json",
            "xml",
            "a:b",
            "sqlite:///x.db",
            "mysql://u:p@h/db",
            "tests.cli.apps.worker_app:setup",
        ]
    )
    | texts
)
argvs = st.lists(cli_flags | cli_values, max_size=6)

ALLOWED_PAYLOAD_ERRORS = (PayloadValidationError, PayloadTooLargeError)


def _normalise(value: Any) -> Any:
    """JSON's view of a value (what a round-trip may legitimately change: tuples become lists)."""
    if isinstance(value, tuple | list):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b) and not (
        isinstance(a, int | float)
        and isinstance(b, int | float)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


# -- the properties ---------------------------------------------------------------------------------
class Fuzz:
    def __init__(self, ws: Workspace, examples: int) -> None:
        self.ws = ws
        self.examples = examples
        self.runner = asyncio.Runner()
        self.m = Monque(sqlite_url(str(ws.db)), recover_stale_jobs=False, stats_cache_ttl=0)
        self.small = Monque(sqlite_url(str(ws.db)), recover_stale_jobs=False, max_payload_size=4096)
        self.run(self.m.initialize())
        self.run(self.small.initialize())
        self.accepted: dict[str, int] = {}
        self.rejected: dict[str, int] = {}

    def run(self, coro: Any) -> Any:
        return self.runner.run(coro)

    def close(self) -> None:
        self.run(self.m.close())
        self.run(self.small.close())
        self.runner.close()

    def tally(self, what: str, accepted: bool) -> None:
        book = self.accepted if accepted else self.rejected
        book[what] = book.get(what, 0) + 1

    def settings(self, factor: float = 1.0) -> Callable[[Any], Any]:
        return settings(
            max_examples=max(5, int(self.examples * factor)),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            derandomize=False,
        )

    def enqueue_round_trip(
        self,
        what: str,
        m: Monque,
        name: Any,
        data: Any,
        unique_key: Any = None,
        errors: tuple[type[BaseException], ...] = (InvalidJobIdentifierError,),
    ) -> None:
        try:
            job = self.run(m.enqueue(name, data, unique_key=unique_key))
        except errors:
            self.tally(what, False)
            return
        self.tally(what, True)
        stored = self.run(m.get_job(job.id))
        assert stored is not None, f"enqueue returned {job.id} but get_job finds nothing"
        assert stored.name == name, (stored.name, name)
        assert stored.unique_key == unique_key, (stored.unique_key, unique_key)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))  # only for these (recursive) comparisons of deep payloads
        try:
            same = _same(stored.data, _normalise(data))
            returned = _same(job.data, stored.data) or _same(_normalise(job.data), stored.data)
        finally:
            sys.setrecursionlimit(limit)
        assert same, f"data did not round-trip: {str(data)[:200]} -> {str(stored.data)[:200]}"
        assert returned, f"enqueue returned {str(job.data)[:200]} but the store holds {str(stored.data)[:200]}"

    # each property is a method; ``properties`` lists them
    def names(self) -> None:
        @self.settings()
        @given(texts)
        def prop(name: str) -> None:
            self.enqueue_round_trip("name", self.m, name, {"k": 1})

        prop()

    def unique_keys(self) -> None:
        @self.settings()
        @given(texts | st.text(min_size=1000, max_size=1100) | st.integers())
        def prop(key: Any) -> None:
            self.enqueue_round_trip("unique key", self.m, "fuzz.uniq", {"k": 1}, unique_key=key)
            try:
                a = self.run(self.m.enqueue("fuzz.uniq2", {"a": 1}, unique_key=key))
            except InvalidJobIdentifierError:
                return
            b = self.run(self.m.enqueue("fuzz.uniq2", {"b": 2}, unique_key=key))
            assert a.id == b.id, "a second enqueue of a pending unique key made a new job"

        prop()

    def payloads(self) -> None:
        @self.settings(2)
        @given(payloads | odd_payloads)
        def prop(data: Any) -> None:
            self.enqueue_round_trip("payload", self.m, "fuzz.data", data, errors=ALLOWED_PAYLOAD_ERRORS)

        prop()

        @self.settings(0.5)
        @given(st.integers(1, 3000), st.sampled_from(["list", "dict"]))
        def deep(depth: int, kind: str) -> None:
            data: Any = "leaf"
            for _ in range(depth):
                data = [data] if kind == "list" else {"d": data}
            self.enqueue_round_trip("deep payload", self.m, "fuzz.deep", data, errors=ALLOWED_PAYLOAD_ERRORS)

        deep()

        @self.settings(0.2)
        @given(st.integers(1, 6_000_000))
        def huge(size: int) -> None:
            self.enqueue_round_trip(
                "huge payload", self.m, "fuzz.huge", {"blob": "z" * size}, errors=ALLOWED_PAYLOAD_ERRORS
            )
            try:
                self.run(self.small.enqueue("fuzz.huge", {"blob": "z" * size}))
                assert size < 4096, "a payload over max_payload_size was accepted"
            except PayloadTooLargeError:
                self.tally("payload over max_payload_size", False)

        huge()

    def run_at(self) -> None:
        @self.settings()
        @given(st.none() | st.timedeltas(min_value=timedelta(days=-3650), max_value=timedelta(days=3650)) | moments)
        def prop(when: Any) -> None:
            try:
                job = self.run(self.m.enqueue("fuzz.when", {"k": 1}, run_at=when))
            except (InvalidJobQueryError, InvalidJobIdentifierError):
                self.tally("run_at", False)
                return
            except OverflowError as error:  # noqa: F841 - a date far out of range
                raise AssertionError(f"run_at={when!r} raised OverflowError, not a MonqueError") from None
            self.tally("run_at", True)
            stored = self.run(self.m.get_job(job.id))
            assert stored is not None and stored.next_run_at_ms == job.next_run_at_ms

        prop()

    def cron(self) -> None:
        @self.settings(2)
        @given(crons, zones)
        def prop(expression: str, tz: str | None) -> None:
            try:
                job = self.run(self.m.schedule(expression, "fuzz.cron", {"c": expression}, tz=tz))
            except InvalidCronError:
                self.tally("cron", False)
                return
            self.tally("cron", True)
            stored = self.run(self.m.get_job(job.id))
            assert stored is not None and stored.repeat_interval == job.repeat_interval
            assert stored.next_run_at_ms >= job.created_at_ms - 1000, "next run in the past"

        prop()

    def cursors(self) -> None:
        page = self.run(self.m.get_jobs_with_cursor(limit=3))
        valid = [c for c in (page.cursor,) if c] if hasattr(page, "cursor") else []
        valid += [getattr(page, a) for a in ("next_cursor", "prev_cursor", "previous_cursor") if getattr(page, a, None)]

        def mutate(data: Any) -> str:
            if not valid:
                return "F"
            base = data.draw(st.sampled_from(valid))
            i = data.draw(st.integers(0, len(base) - 1))
            return base[:i] + data.draw(st.sampled_from(["A", "_", "-", "=", "", "Z9"])) + base[i + 1 :]

        @self.settings(2)
        @given(
            st.data(),
            texts | st.integers() | st.none(),
            st.sampled_from(["forward", "backward", "sideways"]),
            st.sampled_from(["id", "created_at", "updated_at", "next_run_at", "name"]),
            st.sampled_from(["asc", "desc", "up"]),
        )
        def prop(data: Any, text: Any, direction: str, by: str, order: str) -> None:
            cursor = mutate(data) if data.draw(st.booleans()) else text
            try:
                sort = JobSort(by=by, direction=order)  # type: ignore[arg-type]
                self.run(
                    self.m.get_jobs_with_cursor(
                        cursor=cursor,
                        limit=5,
                        direction=direction,  # type: ignore[arg-type]
                        sort=sort,
                    )
                )
                self.tally("cursor", True)
            except (InvalidCursorError, InvalidJobQueryError):
                self.tally("cursor", False)

        prop()

    def selectors(self) -> None:
        @self.settings(2)
        @given(
            texts | st.none() | st.integers(),
            status_args,
            moments,
            moments,
            st.sampled_from(["cancel", "retry", "delete", "count", "get", "stats"]),
        )
        def prop(name: Any, status: Any, older: Any, newer: Any, action: str) -> None:
            if isinstance(name, str):
                name = "nomatch." + name  # never touches the jobs the other properties check
            try:
                if action == "count":
                    self.run(self.m.count_jobs(JobListFilter(name=name, status=status, created_at_from=older)))
                elif action == "get":
                    self.run(self.m.get_jobs(name=name, status=status, limit=5))
                elif action == "stats":
                    self.run(self.m.get_queue_stats(name))
                else:
                    selector = JobSelector(name=name, status=status, older_than=older, newer_than=newer)
                    call = {"cancel": self.m.cancel_jobs, "retry": self.m.retry_jobs, "delete": self.m.delete_jobs}
                    result = self.run(call[action](selector))
                    assert result.count == 0 or name is None, f"{action} matched {result.count} jobs of {name!r}"
                self.tally("selector", True)
            except (InvalidJobQueryError, InvalidJobIdentifierError):
                self.tally("selector", False)

        prop()

    def job_ids(self) -> None:
        real = self.run(self.m.enqueue("fuzz.ids", {"k": 1})).id

        @self.settings(2)
        @given(
            ids | st.sampled_from([real, real.upper(), real + " ", " " + real, real[:-1]]),
            st.sampled_from(["get", "cancel", "retry", "reschedule", "delete"]),
        )
        def prop(job_id: Any, action: str) -> None:
            try:
                if action == "get":
                    out: Any = self.run(self.m.get_job(job_id))
                elif action == "cancel":
                    out = self.run(self.m.cancel_job(job_id))
                elif action == "retry":
                    out = self.run(self.m.retry_job(job_id))
                elif action == "reschedule":
                    out = self.run(self.m.reschedule_job(job_id, timedelta(seconds=5)))
                else:
                    out = self.run(self.m.delete_job(job_id) if job_id != real else self.m.get_job(job_id))
            except JobStateError:
                assert isinstance(job_id, str) and job_id.strip().lower() == real, (
                    f"JobStateError for an id that names no job: {job_id!r}"
                )
                self.tally("job id", False)
                return
            self.tally("job id", out not in (None, False))

        prop()

    def urls(self) -> None:
        @self.settings(2)
        @given(url_heads, url_tails)
        def prop(head: str, tail: str) -> None:
            url = head + tail
            try:
                m = Monque(url)
            except MonqueError:
                self.tally("url", False)
                return
            self.tally("url", True)
            assert m.display_url, "an accepted URL has no display form"

        prop()

    def cli(self) -> None:
        from monque_tui.cli.parser import parse
        from monque_tui.cli.settings import resolve
        from monque_tui.common.exitcodes import CliError

        @self.settings(2)
        @given(argvs)
        def prop(argv: list[str]) -> None:
            try:
                args = parse(argv)
                if args.command is None:  # the console's form: its settings resolve too
                    resolve(vars(args))
                self.tally("cli", True)
            except CliError as error:
                assert error.code == 2, f"parse error with exit code {error.code}: {error.message}"
                assert "\n" not in error.message
                self.tally("cli", False)

        prop()

    def properties(self) -> list[Callable[[], None]]:
        return [
            self.names,
            self.unique_keys,
            self.payloads,
            self.run_at,
            self.cron,
            self.cursors,
            self.selectors,
            self.job_ids,
            self.urls,
            self.cli,
        ]


def run_fuzz(ws: Workspace, examples: int) -> Result:
    result = Result(
        "6. bad input (hypothesis)",
        f"{examples} examples per input kind (10 kinds), real SQLite file",
        "fuzzed names, keys, payloads (deep/huge/NaN/non-JSON), run_at, cron, cursors, selectors, ids, URLs, CLI args",
    )
    fuzz = Fuzz(ws, examples)
    try:
        for prop in fuzz.properties():
            try:
                prop()
            except Exception as error:  # noqa: BLE001 - a property failed: record hypothesis' example
                parts = list(error.exceptions) if isinstance(error, BaseExceptionGroup) else [error]
                text = " | ".join("".join(traceback.format_exception_only(type(e), e)).strip() for e in parts)
                result.violations.append(f"{prop.__name__}: {text[:1500]}")
    finally:
        fuzz.close()
    result.check(integrity(ws.db) == "ok", "integrity_check failed after fuzzing")
    # The store still works: a worker process runs a normal job on the fuzzed file.
    worker = ws.worker("after-fuzz", concurrency=2, print_jobs=True)
    worker.wait_for("ready", READY)
    (job_id,) = enqueue_here(ws.db, [{"name": "task", "data": {"ok": True}}])
    worker.wait_for("job:complete", 30, where=lambda ln: ln["job_id"] == job_id)
    result.check(not worker.events("job:error"), f"worker errors: {worker.events('job:error')[:2]}")
    worker.signal(15)
    result.check(worker.wait_exit(30) == 0, "the worker did not stop cleanly")
    result.jobs = ws.probe.count()
    acc = ", ".join(
        f"{k} {fuzz.accepted.get(k, 0)}/{fuzz.accepted.get(k, 0) + fuzz.rejected.get(k, 0)}"
        for k in sorted(set(fuzz.accepted) | set(fuzz.rejected))
    )
    result.notes.append(f"accepted/tried: {acc}")
    return result
