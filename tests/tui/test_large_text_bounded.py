"""A job's text of any size reaches the widgets in bounded pieces (issue 25, point 7).

A 10 MB failReason or traceback (a row written by another program or by hand: the engine
bounds what it writes) held the console's UI loop for minutes: Rich laid out every character
of it in the detail's Error panel, and the table cell stripped and split the whole text for
each frame. Measured structurally, without timing: how many characters each widget is handed,
and (with a text that fails the test when read whole) how much of a field each formatter reads.
"""

from __future__ import annotations

import io
import json
import random
import sqlite3
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.content import Content
from textual.widgets import Static, TextArea

from monque_engine import Attempt, Job, JobStatus, errorgroups
from monque_engine.attempts import MAX_REASON_CHARS
from monque_engine.errorgroups import MAX_PATTERN_CHARS, normalize_message
from monque_engine.store.sqlite.journal import Journal
from monque_engine.store.sqlite.schema import Tables
from monque_tui.console.formatting import error_text, first_line
from monque_tui.console.longtext import clip, clip_line, paginate
from monque_tui.console.screens import detail as detail_module
from monque_tui.console.screens.detail import (
    REASON_CHARS,
    TRACEBACK_PAGE_CHARS,
    JobDetailScreen,
    Timeline,
    attempt_cells,
    job_renderable,
)
from monque_tui.console.screens.errors import ErrorsScreen
from monque_tui.demo.seed import SEED_NOW_MS, seed_id

from .conftest import move_to, running_console, wait_for

BIG = seed_id(2)  # the seed's failed send-email job, overwritten below as a foreign program would
TEN_MB = 10 * 1024 * 1024
#: The most characters a formatter may read of a field at once (a slice of it).
READ_LIMIT = 10_000


class Tripwire(str):
    """A huge text that fails the test when read whole: by a whole-text method (strip, split,
    lower, translate, format…), or a slice longer than ``READ_LIMIT``. Indexing with bounds,
    ``len`` and regex searches (which stop at their match) are allowed."""

    def __getitem__(self, key: Any) -> str:
        if isinstance(key, slice):
            start, stop, _ = key.indices(len(self))
            if stop - start > READ_LIMIT:
                raise AssertionError(f"read {stop - start:,} characters of a {len(self):,}-character text at once")
        return str.__getitem__(self, key)


def _trip(name: str) -> Any:
    def read_whole(self: str, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"{name}() read the whole {len(self):,}-character text")

    return read_whole


#: The str methods that read the whole text: a Tripwire fails the test in each.
WHOLE_TEXT_METHODS = (
    "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "partition", "rpartition", "lower", "upper",
    "casefold", "replace", "encode", "expandtabs", "translate", "count", "find", "rfind", "index", "rindex",
    "join", "isspace", "__iter__", "__contains__", "__str__", "__format__", "__add__", "__mod__", "__mul__",
)  # fmt: skip
for _name in WHOLE_TEXT_METHODS:
    setattr(Tripwire, _name, _trip(_name))


def ten_mb(line: str = '  File "handlers/deep.py", line 7, in f\n') -> str:
    return (line * (TEN_MB // len(line) + 1))[:TEN_MB]


def huge(line: str = '  File "handlers/deep.py", line 7, in f\n') -> Tripwire:
    return Tripwire(ten_mb(line))


def _job(**fields: Any) -> Job:
    base: dict[str, Any] = {
        "id": "65a1b2c3d4e5f60718293a4b",
        "name": "send-email",
        "data": None,
        "status": JobStatus.FAILED,
        "next_run_at_ms": SEED_NOW_MS,
        "created_at_ms": SEED_NOW_MS,
        "updated_at_ms": SEED_NOW_MS,
        "fail_count": 3,
    }
    return Job(**{**base, **fields})


# -- formatters read a bounded prefix ---------------------------------------------------------------
def test_the_table_cell_reads_only_the_start_of_a_huge_error() -> None:
    job = _job(fail_reason=huge("boom: the server said no\n"), error_type=huge("x"))
    text = error_text(job)
    assert text.startswith("xxxx") and text.endswith(": boom: the server said no") and len(text) < 1_000
    assert first_line(Tripwire("\n \t" * 2_000_000 + "first\nsecond")) == "first"  # blank lead-in: a regex skips it


def test_the_error_group_pattern_and_attempt_summary_read_only_the_start() -> None:
    assert normalize_message(huge("order 1234 failed\n")) == "order <n> failed"
    record = Attempt(1, "failed", "w-1", 1, 2, error_type="E", error_message=huge("y"))
    assert record.summary == "E: " + "y" * MAX_REASON_CHARS + "…"
    # A message the engine wrote (at most MAX_REASON_CHARS and its "…") reads as before.
    bounded = "z" * MAX_REASON_CHARS + "…"
    assert Attempt(1, "failed", None, 1, 2, error_type="E", error_message=bounded).summary == f"E: {bounded}"


def test_the_bounded_first_lines_equal_the_whole_text_definitions() -> None:
    """Same result as ``strip`` + split for every text (the error-group key must not change)."""
    rng = random.Random(25)
    alphabet = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u3000", "a", "b", "'", "7"]
    for _ in range(5_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        for limit in (1, 3, 10, 200):
            old = text.strip().splitlines()[0] if text.strip() else ""
            assert first_line(text, limit) == old[:limit], (text, limit)
        assert errorgroups._first_line(text) == text.strip().split("\n", 1)[0][:MAX_PATTERN_CHARS], text
    assert errorgroups._first_line("a" * 400 + "   \n  ") == "a" * MAX_PATTERN_CHARS
    assert errorgroups._first_line("  ab  \n \t ") == "ab" and errorgroups._first_line("ab  \ncd") == "ab  "
    assert first_line("ab" + " " * 300 + "\n", 200) == "ab"


def test_clip_and_pages() -> None:
    text = "".join(f"line {n}\n" for n in range(1_000))
    shown = clip(text, 100, 3)
    assert shown.shown == "line 0\nline 1\nline 2" and shown.total_chars == len(text)
    assert shown.marker().startswith(f"… {len(text) - len(shown.shown):,} more characters not shown")
    assert clip("short\n", 100, 1).marker() == "" and clip("a\nb", 100, 5).shown == "a\nb"
    assert clip_line("x" * 10, 4) == "xxxx… (+6 characters)" and clip_line("ok", 4) == "ok"
    single = "q" * 100_001
    pages = paginate(single + "\n" + text, 8_000)
    assert "".join(pages.pages) == single + "\n" + text and all(len(p) <= 8_000 for p in pages.pages)


def test_the_detail_renderables_take_only_bounded_pieces_of_every_field() -> None:
    job = _job(
        id=Tripwire("6" * TEN_MB),
        name=huge("n"),
        unique_key=huge("k"),
        status=JobStatus.PROCESSING,
        claimed_by=huge("w"),
        locked_at_ms=SEED_NOW_MS,
        fail_reason=huge(),
        error_type=huge("T"),
    )
    body = job_renderable(job, SEED_NOW_MS, with_payload=False)
    assert handed(body) < REASON_CHARS + 4_000
    record = Attempt(1, huge("o"), huge("i"), 1, 2, error_type="E", error_message=huge("m"))
    assert sum(handed(cell) for cell in attempt_cells(record)) < 2_000


# -- the console, over a real SQLite file -------------------------------------------------------------
def handed(renderable: RenderableType | Content | None) -> int:
    """How many characters of text ``renderable`` hands to Rich (what it lays out when drawn)."""
    if renderable is None:
        return 0
    if isinstance(renderable, str | Text):
        return len(renderable)
    if isinstance(renderable, Content):
        return len(renderable.plain)
    if isinstance(renderable, Group):
        return sum(handed(part) for part in renderable.renderables)
    if isinstance(renderable, Panel):
        return handed(renderable.renderable) + handed(renderable.title)
    if isinstance(renderable, Table):
        return sum(handed(cell) for column in renderable.columns for cell in column.cells)  # type: ignore[arg-type]
    if isinstance(renderable, Syntax):
        return len(renderable.code)
    if isinstance(renderable, Timeline):
        return sum(handed(cell) for attempt in renderable.attempts for cell in attempt_cells(attempt)) + 200
    raise AssertionError(f"unexpected renderable {type(renderable).__name__}")


def plain(renderable: RenderableType) -> str:
    console = Console(width=140, no_color=True, file=io.StringIO())
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def _write_foreign_row(url: str, reason: str, message: str, traceback: str) -> None:
    record = {
        "attempt": 4,
        "outcome": "failed",
        "instanceId": "other-program",
        "startedAt": SEED_NOW_MS - 5_000,
        "endedAt": SEED_NOW_MS - 1_000,
        "errorType": "foreign.HugeError",
        "errorMessage": message,
        "traceback": traceback,
    }
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        conn.execute(
            "UPDATE monque_jobs SET fail_reason = ?, error_type = 'foreign.HugeError', "
            "error_group = 'f0f0f0f0f0f0f0f0', attempts = ? WHERE id = ?",
            (reason, json.dumps([record]), BIG),
        )
        # A row written outside the store moves no kept count: recount, as repair-counts does.
        Journal(Tables("monque_jobs")).rebuild_counts(conn)


async def test_a_ten_megabyte_error_and_traceback_reach_the_widgets_a_bounded_page_at_a_time(
    seeded_url: str,
) -> None:
    reason = ten_mb("HugeError: the upstream answered with its whole log\n")
    message = "m" * TEN_MB  # one 10 MB line
    traceback = "Traceback (most recent call last):\n" + ten_mb() + "foreign.HugeError: the end\n"
    _write_foreign_row(seeded_url, reason, message, traceback)
    async with running_console(seeded_url, size=(140, 36)) as (app, pilot):
        await wait_for(lambda: app.jobs_screen.window.position(BIG) is not None)
        # The table's row: its error cell from the start of the text.
        row = app.jobs_screen.window.position(BIG)
        assert row is not None
        await move_to(app, pilot, BIG)
        line = app.jobs_screen.table.render_line(row + 1).text
        # (At this width the type shows without its module, once: its message already names it.)
        assert "HugeError: the upstream" in line
        await pilot.press("enter")
        await wait_for(
            lambda: (
                isinstance(app.screen, JobDetailScreen)
                and app.screen.payload is not None
                and len(app.screen.attempts) == 1
                and not app.screen.workers._workers
            ),
            30,
        )
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, JobDetailScreen)
        statics = {
            name: handed(screen.query_one(f"#detail-{name}", Static).content)  # type: ignore[arg-type]
            for name in ("title", "body", "attempts", "payload")
        }
        pane = screen.query_one("#detail-traceback", TextArea)
        # 30 MB in the row; every widget holds a bounded piece of it.
        assert statics["body"] <= REASON_CHARS + 4_000, statics
        assert statics["title"] + statics["attempts"] + statics["payload"] <= 20_000, statics
        assert len(pane.text) <= TRACEBACK_PAGE_CHARS and len(str(pane.border_title)) < 300
        body = plain(screen.query_one("#detail-body", Static).content)  # type: ignore[arg-type]
        assert "more characters not shown (10.0 MB in all)" in body and f"export --search {BIG}" in body
        # The traceback's pages: the first holds the head; } pages on; the last holds its end.
        pages = screen.traceback_pages
        assert pages > 300 and f"page 1 of {pages:,}" in str(pane.border_title)
        assert pane.text.startswith("foreign.HugeError: mmm")
        await pilot.press("right_curly_bracket")
        assert screen.trace_page == 1 and len(pane.text) <= TRACEBACK_PAGE_CHARS
        screen.trace_page = pages - 2
        await pilot.press("right_curly_bracket")
        assert pane.text.endswith("foreign.HugeError: the end\n")
        # y still copies all of it.
        await pilot.press("y")
        assert app.clipboard == detail_module.traceback_text(screen.attempts[0])
        assert len(app.clipboard) > 2 * TEN_MB
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
        # The errors view groups it from the start of its message.
        app.action_show_errors()
        await wait_for(lambda: isinstance(app.screen, ErrorsScreen) and app.screen.fetches > 0, 20)
        errors = app.screen
        assert isinstance(errors, ErrorsScreen)
        group = next(g for g in errors.model.groups if g.error_type == "foreign.HugeError")
        assert group.pattern == "HugeError: the upstream answered with its whole log"


def test_a_payload_reads_as_written_with_what_cannot_be_seen_escaped() -> None:
    """The Payload panel showed CJK and emoji as ``\\u6f22\\u5b57`` escapes with its keys
    sorted, and sized the escaped, indented text (393 B for 179 stored bytes); the Result
    panel showed DEL, NEL, U+2028 and a right-to-left override raw, so a value could read
    reversed or as a plain space (a data probe)."""
    from monque_tui.console.payload import paginate, readable_json, stored_size

    value = {"z": 1, "cjk": "漢字かな", "emoji": "😀", "hidden": "\x7f\x85\u2028\u202eevil\u00a0x\ufeff"}
    text = readable_json(value)
    assert '"cjk": "漢字かな"' in text and '"emoji": "😀"' in text
    assert text.index('"z"') < text.index('"cjk"')  # as stored, not sorted
    assert "\\u007f\\u0085\\u2028\\u202eevil\\u00a0x\\ufeff" in text
    assert not any(ch in text for ch in "\x7f\x85\u2028\u202e\u00a0\ufeff")
    assert json.loads(text) == value  # still JSON that reads back the same
    assert stored_size({"s": "😀"}) == len('{"s":"😀"}'.encode())
    assert paginate(value).stored_bytes == stored_size(value)
