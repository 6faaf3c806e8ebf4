"""Property: an empty, blank or control-character filter value never reaches a job (issue 34).

For every text field of ``JobListFilter`` and ``JobSelector`` and for every value that is
empty, only whitespace, or holds a control character, no destructive call reaches a job the
non-empty predicate would not: each engine bulk call (``count_bulk``, ``delete_jobs``,
``cancel_jobs``, ``retry_jobs`` and the in-steps count) and each read refuses it with
``InvalidJobQueryError``, and the command line's filter building refuses the same value in
the flag (exit 2 as ``CliError``). Before, ``""`` and ``" "`` were read as "no filter", so
``delete_jobs(JobListFilter(search=" "))`` deleted every job.

The one exception is written down and checked too: the "contains" text (``text``) is matched
as typed, so a tab or a newline inside text that is not blank is searched for (issue 25);
such a call reaches exactly the jobs the console's own predicate says contain it.

Bounded: one real SQLite store for the module, a few hundred examples, a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monque_engine import InvalidJobQueryError, JobListFilter, JobSelector, Monque
from monque_tui.cli.filter import build_filter
from monque_tui.common.exitcodes import CliError, ExitCode
from monque_tui.console.query import JobQuery

#: C0 and C1 controls: no job name, id, key or group holds one.
CONTROLS = [chr(c) for c in range(0x20)] + [chr(c) for c in range(0x7F, 0xA0)]
#: Whitespace of every kind a value may be made of (C0/C1 ones are controls too).
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2003", "\u3000", "\ufeff"]
WORD = st.text(alphabet="abcXYZ019-_.", min_size=1, max_size=6)

EMPTY = st.just("")
BLANK = st.text(alphabet=SPACES, min_size=1, max_size=5)
#: A control character between two words (surrounding whitespace of an id search is not part of it).
CONTROL = st.tuples(WORD, st.sampled_from(CONTROLS), WORD).map("".join)
#: What even the "contains" text refuses inside it: a NUL.
NUL = st.tuples(st.text(max_size=4), st.just("\x00"), st.text(max_size=4)).map("".join)

LIST_FIELDS = ("name", "name_pattern", "search", "text", "error_group")
SELECTOR_FIELDS = ("name", "error_group", "text")
#: The command line's flag for each field (``--name`` takes a glob as well as a name).
FLAGS = {"name": "name", "name_pattern": "name", "search": "search", "text": "contains", "error_group": "error_group"}


def bad_value(field: str) -> st.SearchStrategy[str]:
    if field == "text":  # matched as typed: a tab inside words is text (checked below), a NUL is not
        return st.one_of(EMPTY, BLANK, NUL)
    return st.one_of(EMPTY, BLANK, CONTROL, NUL)


BAD = st.one_of(
    *(st.tuples(st.just(JobListFilter), st.just(f), bad_value(f)) for f in LIST_FIELDS),
    *(st.tuples(st.just(JobSelector), st.just(f), bad_value(f)) for f in SELECTOR_FIELDS),
)


class Store:
    """One seeded SQLite store and the loop its Monque runs on, for every example."""

    def __init__(self, path: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.monque = Monque(f"sqlite:///{path}", recover_stale_jobs=False)
        self.run(self.monque.initialize())
        for index in range(6):
            self.run(self.monque.enqueue(f"job-{index % 3}", {"n": index, "note": f"line{index}\tend"}))
        self.jobs = self.run(self.monque.get_jobs(limit=100))

    def run(self, work: Any) -> Any:
        return self.loop.run_until_complete(work)

    def stored(self) -> list[tuple[str, str, int]]:
        return sorted(
            (job.id, job.status.value, job.updated_at_ms) for job in self.run(self.monque.get_jobs(limit=100))
        )

    def close(self) -> None:
        self.run(self.monque.close())
        self.loop.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    opened = Store(tmp_path_factory.mktemp("property") / "jobs.db")
    yield opened
    opened.close()


async def _refused(monque: Monque, target: JobListFilter | JobSelector) -> list[str]:
    """Every destructive call (and a read) with ``target``: the names of those that did NOT refuse."""
    calls: dict[str, Any] = {
        "count_bulk": lambda: monque.count_bulk("delete", target),
        "count_bulk_in_steps": lambda: monque.count_bulk_in_steps("delete", target, step=2),
        "delete_jobs": lambda: monque.delete_jobs(target),
        "cancel_jobs": lambda: monque.cancel_jobs(target),
        "retry_jobs": lambda: monque.retry_jobs(target),
    }
    if isinstance(target, JobListFilter):
        calls["count_jobs"] = lambda: monque.count_jobs(target)
        calls["get_jobs_with_cursor"] = lambda: monque.get_jobs_with_cursor(filter=target)
    accepted = []
    for label, call in calls.items():
        try:
            result = call()
            if not hasattr(result, "__aiter__"):
                await result
        except InvalidJobQueryError:
            continue
        accepted.append(label)
    return accepted


def _args(field: str, value: str) -> argparse.Namespace:
    """The namespace ``cancel`` / ``delete`` parse to, with one filter flag given."""
    flags: dict[str, Any] = {
        "command": "delete",
        "name": None,
        "status": None,
        "search": None,
        "contains": None,
        "when": None,
        "error_group": None,
    }
    for time in ("created", "updated", "next_run"):
        flags[time] = flags[f"{time}_from"] = flags[f"{time}_to"] = None
    flags[FLAGS[field]] = value
    return argparse.Namespace(**flags)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BAD)
def test_no_destructive_call_takes_an_empty_blank_or_control_value(store: Store, case: tuple[Any, str, str]) -> None:
    kind, field, value = case
    before = store.stored()
    accepted = store.run(_refused(store.monque, kind(**{field: value})))
    assert accepted == [], (kind.__name__, field, value, accepted)
    with pytest.raises(CliError) as refused:
        store.run(build_filter(store.monque, _args(field, value), 0, every_job=False))
    assert refused.value.code == ExitCode.USAGE and "\n" not in str(refused.value)
    assert store.stored() == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.tuples(WORD, st.sampled_from([c for c in CONTROLS if c != "\x00"]), WORD).map("".join))
def test_contains_text_with_an_inner_control_reaches_only_the_jobs_holding_it(store: Store, text: str) -> None:
    """Text that is not blank is searched as typed: the bulk count is the predicate's count."""
    matching = sum(1 for job in store.jobs if JobQuery(text=text).matches(job))
    for target in (JobListFilter(text=text), JobSelector(text=text)):
        assert store.run(store.monque.count_bulk("delete", target)) == matching
    assert store.run(store.monque.count_jobs(JobListFilter(text=text))) == matching


def test_the_tab_inside_a_payload_is_found(store: Store) -> None:
    """The second property is not vacuous: the seeded payloads do hold a tab between words."""
    assert store.run(store.monque.count_bulk("delete", JobListFilter(text="line1\tend"))) == 1
