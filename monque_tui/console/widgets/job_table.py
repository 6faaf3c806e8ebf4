"""The jobs table: a Line API view of a `JobWindow`.

It renders only the visible lines of the loaded window, so its cost does not grow with the
collection. It asks for more rows (``EdgeReached``) when the cursor or viewport nears an
edge of the window, and keeps the cursor on the same job when the window changes.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from typing import NamedTuple, Self

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from monque_engine import Job, JobStatus

from ..bindings import bindings_for
from ..clock import Clock
from ..formatting import STATUS_STYLES, due_or_finished, error_text, relative, short_id
from ..window import JobWindow

#: How often the table checks whether its rows' ages ("3s ago") need redrawing.
AGES_EVERY = 1.0

#: Fetch more when the cursor or viewport is this close to an edge of the window.
EDGE_MARGIN = 60
FLASH_SECONDS = 1.2
STRIP_CACHE = 400


class Columns(NamedTuple):
    """Which columns fit, and how wide the flexible ones are (0: not shown).

    Only whole columns are drawn: those that do not fit are left out by priority (``fit``),
    never cut at the screen edge. At 60 columns the table ended in ``OWNE`` and at 40 in a
    lone ``i`` of "in 5s" (probe 5).
    """

    name: int
    owner: int
    error: int
    att: bool = True
    due: bool = True
    updated: bool = True
    #: PROGRESS (issue 37), shown while a row of the view runs with a progress report or a
    #: stop request: ``PROGRESS_BAR`` cells (a bar and a percentage) at wide widths, else
    #: ``PROGRESS_TEXT`` (``42%``); 0 when no row has one.
    progress: int = 0

    @classmethod
    def fit(cls, width: int, sort: str = "created_at", longest_name: int = 26, progress: bool = False) -> Columns:
        """Columns by what diagnoses a job: the name (whole, up to 26) and status first, then the
        error (type and message), then its age (UPDATED), then next run and attempts; the
        owner is the first to go. At 80 columns the name was cut (``webhook.de…``) while the
        owner stayed beside a bare ``RuntimeError…`` (issue 28). The column the table is
        sorted by (``sort``) comes before the other times: its header carries the arrow."""
        room = width - (2 + 9 + 11)  # the mark, ID and STATUS are always shown
        name = max(4, min(26, max(4, longest_name), room - 1))
        room -= name + 1
        shown_progress = 0
        if progress:  # right after the status it qualifies: what a running row says first
            shown_progress = PROGRESS_BAR if width >= PROGRESS_BAR_FROM else PROGRESS_TEXT
            if room < shown_progress + 1:
                shown_progress = 0
            room -= shown_progress + 1 if shown_progress else 0
        error = ERROR_MIN if room >= ERROR_MIN + 1 else 0
        room -= error + 1 if error else 0
        order = ["updated", "due", "att"]  # UPDATED, NEXT RUN, ATT (each with its space)
        if sort == "next_run_at":
            order = ["due", "updated", "att"]
        cells = {"updated": 9, "due": 10, "att": 4}
        shown: dict[str, bool] = dict.fromkeys(order, False)
        for column in order:
            if room < cells[column]:
                break
            shown[column] = True
            room -= cells[column]
        updated, due, att = shown["updated"], shown["due"], shown["att"]
        owner = 0
        if att and room >= OWNER_MIN + 1 + ERROR_MIN // 2:
            owner = min(24, room - 1 - ERROR_MIN // 2)
            room -= owner + 1
        if error:
            error += max(0, room)
        elif not any(shown.values()):
            name = max(4, min(26, name + max(0, room)))
        return cls(name, owner, error, att, due, updated, shown_progress)

    @classmethod
    def wide(cls, rows: list[Job]) -> Columns:
        """Every column, each as wide as its longest loaded cell (``z``, as k9s's wide toggle):
        the table scrolls sideways (←/→) instead of cutting a cell."""
        name = max([4, *(len(job.name) for job in rows)])
        owner = max([5, *(len(job.claimed_by or "") for job in rows if job.status is JobStatus.PROCESSING)])
        failed = [error_text(job) for job in rows if job.status is JobStatus.FAILED or job.fail_count]
        error = max([ERROR_MIN, *(len(text) for text in failed)])
        progress = PROGRESS_BAR if any(_runs_visibly(job) for job in rows) else 0
        return cls(min(name, WIDE_MAX), min(owner, WIDE_MAX), min(error, WIDE_MAX), progress=progress)

    @property
    def total(self) -> int:
        """Cells the row takes (mark, ID and status always; each shown column with its space)."""
        cells = 2 + 9 + 11 + self.name + 1 + (self.progress + 1 if self.progress else 0)
        cells += (4 if self.att else 0) + (10 if self.due else 0) + (9 if self.updated else 0)
        return cells + (self.owner + 1 if self.owner else 0) + (self.error + 1 if self.error else 0)


#: Cells ←/→ move the wide view by.
WIDE_STEP = 20
#: A wide cell is cut only past this many characters (a megabyte-long message stays bounded).
WIDE_MAX = 400
#: The error column is shown only this wide or wider ("ConnectTimeout: timed out connect…").
ERROR_MIN = 28
#: Below this error width the type loses its module path (``ConnectTimeout``, not ``httpx.ConnectTimeout``).
SHORT_TYPE_BELOW = 48
#: ... and the owner only this wide, once every other column is shown.
OWNER_MIN = 12
#: PROGRESS as a percentage (``100%``, or ``stopping``) and as a bar with it, from this width.
PROGRESS_TEXT = 8
PROGRESS_BAR = 16
PROGRESS_BAR_FROM = 120


def _runs_visibly(job: Job) -> bool:
    """A running row with something for PROGRESS to say: a report, or a stop on its way."""
    return job.status is JobStatus.PROCESSING and (job.running_progress is not None or job.stop_pending)


def progress_cell(job: Job, width: int) -> tuple[str, str]:
    """``stopping`` (a stop requested, the handler still running), ``42%``, or with room a bar
    ``████░░░░░░  42%``; blank for rows with neither."""
    if job.status is not JobStatus.PROCESSING:
        return _cell("", width)
    if job.stop_pending:
        return _cell("stopping", width, "bold yellow")
    report = job.running_progress
    if report is None:
        return _cell("", width)
    percent = f"{report.percent}%"
    if width < PROGRESS_BAR:
        return _cell(percent, width, "cyan", right=True)
    bar = width - 5
    filled = int(report.fraction * bar)
    return _cell("█" * filled + "░" * (bar - filled) + percent.rjust(5), width, "cyan")


Cells = list[tuple[str, str]]


def _cell(text: str, width: int, style: str = "", right: bool = False) -> tuple[str, str]:
    if len(text) > width:
        text = text[: max(0, width - 1)] + "…"
    padded = text.rjust(width) if right else text.ljust(width)
    return padded + " ", style


_HOURS_MINUTES = re.compile(r"(\d+h)\d\dm( ago)$")


def fit_age(text: str, width: int) -> str:
    """An age in ``width`` cells, whole: ``1h03m ago`` (9) becomes ``1h ago`` in UPDATED's 8.

    Cut at the cell's edge it read "1h03m a…" for every job updated one to ten hours ago
    (probe 6, once the table's ages moved on a quiet queue).
    """
    if len(text) <= width:
        return text
    return _HOURS_MINUTES.sub(r"\1\2", text)


@functools.lru_cache(maxsize=64)
def _style(name: str) -> Style | None:
    return Style.parse(name) if name else None


@functools.lru_cache(maxsize=64)
def _blank_invisible(style: Style) -> bool:
    """True when ``style`` on spaces draws the same as no style (only colour of text, bold, dim)."""
    return style.bgcolor is None and not (
        style.underline or style.reverse or style.strike or style.overline or style.underline2 or style.frame
    )


class JobTable(ScrollView, can_focus=True):
    BINDINGS = bindings_for("table")
    DEFAULT_CSS = """
    JobTable { overflow-x: hidden; overflow-y: auto; height: 1fr; }
    JobTable > .job-table--header { text-style: bold; color: $text-muted; }
    JobTable > .job-table--cursor { background: $accent 40%; }
    JobTable:focus > .job-table--cursor { background: $accent 70%; }
    JobTable > .job-table--marked { color: $warning; text-style: bold; }
    JobTable > .job-table--flash { background: $warning 25%; }
    JobTable > .job-table--placeholder { color: $text-muted; text-style: italic; }
    """
    COMPONENT_CLASSES = {
        "job-table--header",
        "job-table--cursor",
        "job-table--marked",
        "job-table--flash",
        "job-table--placeholder",
    }

    class CursorMoved(Message):
        def __init__(self, job: Job | None) -> None:
            super().__init__()
            self.job = job

    class EdgeReached(Message):
        def __init__(self, edge: str) -> None:
            super().__init__()
            self.edge = edge  # "before" | "after"

    class FirstPaint(Message):
        """Jobs were drawn for the first time (the console's start-up measure)."""

    class Opened(Message):
        def __init__(self, job: Job) -> None:
            super().__init__()
            self.job = job

    def __init__(
        self,
        clock: Clock,
        marks: dict[str, Job],
        *,
        on_cursor: Callable[[Job | None, int], None] | None = None,
        id: str | None = None,
        ages_move: bool = False,
    ) -> None:
        super().__init__(id=id)
        self._clock = clock
        #: Redraw the rows' ages ("3s ago") as the clock moves, not only when a row changes.
        self._ages_move = ages_move
        #: Told the cursor's job and row the moment they change, before any message is handled:
        #: a live flush or an action that runs first must not see the previous job (the
        #: CursorMoved message can wait behind other work, and live edits then moved the cursor back).
        self._on_cursor = on_cursor
        self.marks = marks
        #: "Mark all matching" (issue 13): every row the view shows is marked.
        self.all_marked = False
        self.window: JobWindow | None = None
        self.cursor_row = 0
        self.placeholder = "Loading…"
        self.sort_column = "created_at"
        self.descending = True
        self._flash: dict[str, float] = {}
        #: Rendered rows of the current second: a refresh redraws only rows that changed.
        self._strips: dict[tuple[object, ...], Strip] = {}
        self._cache_second = -1
        self._painted = False
        #: ``z``: every column whole, scrolled sideways (``Columns.wide``), else what fits.
        self.wide = False
        self._wide_columns: Columns | None = None
        self._longest_name = 26
        #: A row of the window runs with a progress report or a stop request (PROGRESS shown).
        self._progress = False
        #: What the last whole-table redraw was asked to show (``_view``, taken when it was
        #: asked: callers ask after changing what is shown); None after a partial one.
        self._shown_view: tuple[object, ...] | None = None
        self._viewable = True

    # -- the window -----------------------------------------------------------------------------
    @property
    def rows(self) -> list[Job]:
        return self.window.rows if self.window is not None else []

    @property
    def cursor_job(self) -> Job | None:
        rows = self.rows
        return rows[self.cursor_row] if 0 <= self.cursor_row < len(rows) else None

    @property
    def _page_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def show_window(self, window: JobWindow, cursor_id: str | None = None, *, to_top: bool = False) -> None:
        """Display a new or reloaded window, keeping the cursor on ``cursor_id`` when it is there.

        Redrawn only when what the screen shows differs (``_view``): beside a drain of 5,000
        jobs/s every feed flush overflows and reloads the window around the cursor, twice a
        second, and the reloaded rows on screen were nearly always the ones already drawn
        (a whole-table frame each time: issue 40)."""
        self.window = window
        position = window.position(cursor_id) if cursor_id else None
        self.cursor_row = 0 if to_top or position is None else position
        self._resize()
        if to_top:
            self.scroll_to(y=0, animate=False, immediate=True)
        self._cursor_changed()
        if self._view() != self._shown_view:
            self.refresh()

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        if getattr(self, "_viewable", False):  # (Textual asks for redraws while the widget is built)
            whole = not regions or regions == (self.size.region,)
            self._shown_view = self._view() if whole else None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _view(self) -> tuple[object, ...]:
        """Everything the visible lines are drawn from: the size, scroll and cursor, the header's
        inputs, and each visible row as the strip cache keys it (its id, last update and
        status; marked, flashing), in the current second (ages move each second)."""
        top = int(self.scroll_y)
        marks, flash = self.marks, self._flash
        rows = tuple(
            (job.id, job.updated_at_ms, job.status, job.id in marks, job.id in flash)
            for job in self.rows[top : top + self.size.height]
        )
        return (
            self._clock() // 1000,
            self.size,
            int(self.scroll_x),
            top,
            self.cursor_row,
            self.has_focus,
            self.all_marked,
            self.wide,
            self.sort_column,
            self.descending,
            self.placeholder,
            self._longest_name,
            self._progress,
            self._rows_above(),
            len(self.rows),
            rows,
        )

    def window_changed(self, cursor_id: str | None, flash: set[str] | None = None) -> None:
        """The window was edited in place (live changes): follow the cursor's job."""
        old_row = self.cursor_row
        if cursor_id is not None and self.window is not None:
            position = self.window.position(cursor_id)
            if position is not None:
                self.cursor_row = position
        self.cursor_row = max(0, min(self.cursor_row, len(self.rows) - 1))
        self._resize()
        shift = self.cursor_row - old_row
        if shift and self.scroll_y > 0:
            # Keep the cursor's job on its screen line while rows come and go above it.
            self.scroll_to(y=max(0, self.scroll_y + shift), animate=False, immediate=True)
        elif shift and self.cursor_row >= self._page_rows:
            # At the top, new rows show as they arrive, until the cursor's job would leave the screen.
            self.scroll_to(y=self.cursor_row - self._page_rows + 1, animate=False, immediate=True)
        if flash:
            now = time.monotonic()
            until = now + FLASH_SECONDS
            if self._flash:
                # Rows that left the window are never drawn again: drop expired entries here, or they pile up.
                self._flash = {job_id: at for job_id, at in self._flash.items() if at > now}
            for job_id in flash:
                self._flash[job_id] = until
            self.set_timer(FLASH_SECONDS + 0.05, self.refresh)
        self._cursor_changed(post=self.cursor_job is None or self.cursor_job.id != cursor_id)
        self.refresh()

    def rows_shifted(self, delta: int) -> None:
        """``delta`` rows were added (+) or removed (-) above the first row."""
        self.cursor_row = max(0, self.cursor_row + delta)
        if self._on_cursor is not None:
            self._on_cursor(self.cursor_job, self.cursor_row)
        self._resize()
        self.scroll_to(y=max(0, self.scroll_y + delta), animate=False, immediate=True)
        self.refresh()

    def _resize(self) -> None:
        # The name column is as wide as the longest loaded name (at most 26): the room a
        # short name leaves goes to the error.
        self._longest_name = max([4, *(len(job.name) for job in self.rows)])
        self._progress = any(_runs_visibly(job) for job in self.rows)
        width = self.size.width
        if self.wide:
            self._wide_columns = Columns.wide(self.rows)
            self._strips.clear()  # a row's cells depend on its neighbours' widths now
            width = max(width, self._wide_columns.total)
        self.virtual_size = Size(width, len(self.rows) + 1)

    def set_wide(self, wide: bool) -> None:
        """Show every cell whole, the table scrolling sideways; or back to what fits."""
        self.wide = wide
        self._wide_columns = None
        self._strips.clear()
        self._resize()
        if not wide:
            self._scroll_sideways(0)
        self.refresh()

    def action_wide_left(self) -> None:
        self._scroll_sideways(int(self.scroll_x) - WIDE_STEP)

    def action_wide_right(self) -> None:
        self._scroll_sideways(int(self.scroll_x) + WIDE_STEP)

    def _scroll_sideways(self, x: int) -> None:
        """Set directly: ``scroll_to`` does not move a widget whose ``overflow-x`` is hidden
        (the table draws no horizontal scrollbar; the wide view is read with ←/→)."""
        limit = max(0, self.virtual_size.width - self.scrollable_content_region.width)
        self.set_scroll(max(0, min(limit, x)), None)
        self.refresh()

    def _columns(self, width: int) -> tuple[Columns, int]:
        """The columns drawn, and the width their strips are drawn at (wider than the screen when wide)."""
        if self.wide and self._wide_columns is not None:
            return self._wide_columns, max(width, self._wide_columns.total)
        return Columns.fit(width, self.sort_column, self._longest_name, self._progress), width

    def on_mount(self) -> None:
        if self._ages_move:
            self.set_interval(AGES_EVERY, self._ages_tick)

    def _ages_tick(self) -> None:
        """Redraw when the rows on screen were drawn in an earlier second (their ages moved).

        Rows were redrawn only when a change arrived: on a queue gone quiet (the workers
        stopped by a full disk, a paused name) every row kept "1s ago" for minutes, under
        "● live" (probe 6). A busy table is redrawn by its changes anyway: this adds nothing.
        """
        if self.rows and self._clock() // 1000 != self._cache_second:
            self.refresh()

    def on_resize(self) -> None:
        self._resize()

    # -- cursor -----------------------------------------------------------------------------------
    def move_cursor(self, row: int) -> None:
        count = len(self.rows)
        self.cursor_row = max(0, min(row, count - 1)) if count else 0
        self._scroll_to_cursor()
        self._cursor_changed()
        self.refresh()

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_y)
        visible = self._page_rows
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False, immediate=True)

    def _cursor_changed(self, post: bool = True) -> None:
        if self._on_cursor is not None:
            self._on_cursor(self.cursor_job, self.cursor_row)
        if post:
            self.post_message(self.CursorMoved(self.cursor_job))
        self._check_edges()

    def _check_edges(self) -> None:
        window = self.window
        if window is None:
            return
        top = min(self.cursor_row, int(self.scroll_y))
        bottom = max(self.cursor_row, int(self.scroll_y) + self._page_rows)
        if window.has_after and bottom >= len(window) - EDGE_MARGIN:
            self.post_message(self.EdgeReached("after"))
        if window.has_before and top <= EDGE_MARGIN:
            self.post_message(self.EdgeReached("before"))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self._check_edges()

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - self._page_rows)

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + self._page_rows)

    def action_first(self) -> None:
        if self.window is not None and self.window.has_before:
            self.post_message(self.EdgeReached("first"))
        self.move_cursor(0)

    def action_last(self) -> None:
        if self.window is not None and self.window.has_after:
            self.post_message(self.EdgeReached("last"))
        self.move_cursor(len(self.rows) - 1)

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_y) + event.y - 1
        if 0 <= row < len(self.rows):
            if row == self.cursor_row and event.chain >= 2:
                job = self.cursor_job
                if job is not None:
                    self.post_message(self.Opened(job))
            self.move_cursor(row)

    # -- rendering ----------------------------------------------------------------------------------
    def _header(self, columns: Columns, width: int) -> Cells:
        arrow = "↓" if self.descending else "↑"

        def label(text: str, column: str, width: int) -> str:
            """The sort arrow on the sorted column, spaced when there is room: "UPDATED ↑" was
            cut to "UPDATED…" in its 8 cells, hiding which way the table is sorted."""
            if self.sort_column != column:
                return text
            return f"{text} {arrow}" if len(text) + 2 <= width else f"{text}{arrow}"

        due = label("NEXT RUN", "next_run_at", 9)
        updated = label("UPDATED", "updated_at", 8)
        cells = [
            _cell("", 1),
            _cell(label("ID", "created_at", 8), 8),
            _cell("NAME", columns.name),
            _cell(label("STATUS", "locked_at", 10), 10),  # sorted by run time: the processing rows' age
        ]
        if columns.progress:
            cells.append(_cell("PROGRESS", columns.progress))
        if columns.att:
            cells.append(_cell("ATT", 3, right=True))
        if columns.due:
            cells.append(_cell(due, 9))
        if columns.updated:
            cells.append(_cell(updated, 8))
        if columns.owner:
            cells.append(_cell("OWNER", columns.owner))
        above = self._rows_above()
        if columns.error:
            cells.append(_cell(self._error_header(columns.error, above), columns.error))
        elif above:
            # No error column to carry "↑ 37 above (g)": it takes the place of the last labels
            # (whole ones), or the newest-first view looks frozen at a narrow width.
            while len(cells) > 2 and sum(len(text) for text, _ in cells) + len(above) > width:
                cells.pop()
            cells.append((above, ""))
        return cells

    def _rows_above(self) -> str:
        """``↑ 37 above (g)`` while rows are hidden above the screen, else nothing.

        The cursor stays on its job while live rows arrive above it (so a key never acts on
        a job the operator did not choose); once its job would leave the screen the view
        stops moving, and without this a newest-first view looked frozen (probe finding).
        """
        window = self.window
        if window is not None and not window.offset_known:
            return "↑ more above (g)"  # loaded from the bottom (G): how many is not known
        hidden = int(self.scroll_y) + (window.offset if window is not None else 0)
        if hidden > 0:
            return f"↑ {hidden:,} above (g)"
        if window is not None and window.has_before:
            return "↑ more above (g)"
        return ""

    def _error_header(self, width: int, above: str) -> str:
        if not above:
            return "ERROR"
        if width >= len(above) + 7:
            return "ERROR" + above.rjust(width - 5)
        if width >= len(above):
            return above
        short = above.replace(" above", "")  # "↑ 37 (g)": whole, rather than cut to "↑ 37 abo…"
        return short if width >= len(short) else "↑"

    def _row(self, job: Job, columns: Columns, now: int) -> Cells:
        """Plain (text, style) cells: turned into segments directly, without Rich's Text layout."""
        marked = self.all_marked or job.id in self.marks
        owner = job.claimed_by if job.status is JobStatus.PROCESSING else ""
        failed = job.status is JobStatus.FAILED or job.fail_count
        error = error_text(job, short_type=columns.error < SHORT_TYPE_BELOW) if failed else ""
        cells = [
            _cell("●" if marked else " ", 1, "bold yellow"),
            _cell(short_id(job.id), 8, "bold" if marked else ""),
            _cell(job.name, columns.name),
            _cell(job.status.value, 10, STATUS_STYLES[job.status]),
        ]
        if columns.progress:
            cells.append(progress_cell(job, columns.progress))
        if columns.att:
            cells.append(
                _cell(str(job.fail_count) if job.fail_count else "", 3, "red" if job.fail_count else "", right=True)
            )
        if columns.due:
            cells.append(_cell(due_or_finished(job, now), 9))
        if columns.updated:
            cells.append(_cell(fit_age(relative(job.updated_at_ms, now), 8), 8, "dim"))
        if columns.owner:
            cells.append(_cell(owner or "", columns.owner, "magenta"))
        if columns.error:
            cells.append(_cell(error, columns.error, "red"))
        return cells

    def render_line(self, y: int) -> Strip:
        screen_width = self.scrollable_content_region.width
        columns, width = self._columns(screen_width)
        strip = self._render_line(y, columns, width)
        if width == screen_width:
            return strip
        left = int(self.scroll_x)
        return strip.crop(left, left + screen_width)

    def _render_line(self, y: int, columns: Columns, width: int) -> Strip:
        base = self.rich_style
        if y == 0:
            style = self.get_component_rich_style("job-table--header")
            return self._strip(self._header(columns, width), width, base + style)
        rows = self.rows
        row = int(self.scroll_y) + y - 1
        if not rows:
            if y == 2:
                style = self.get_component_rich_style("job-table--placeholder")
                return self._strip(Text("  " + self.placeholder), width, base + style)
            return Strip.blank(width, base)
        if row >= len(rows):
            return Strip.blank(width, base)
        job = rows[row]
        if not self._painted:
            self._painted = True
            self.call_later(self.post_message, self.FirstPaint())
        flash_until = self._flash.get(job.id)
        flashing = False
        if flash_until is not None:
            if flash_until > time.monotonic():
                flashing = True
            else:
                del self._flash[job.id]
        now = self._clock()
        second = now // 1000
        if second != self._cache_second or len(self._strips) > STRIP_CACHE:
            # Relative times ("3s ago") change each second: the cache lives for one second at most.
            self._strips.clear()
            self._cache_second = second
        at_cursor = row == self.cursor_row
        key = (
            job.id,
            job.updated_at_ms,
            job.status,
            self.all_marked or job.id in self.marks,
            width,
            columns,
            flashing,
            at_cursor,
            at_cursor and self.has_focus,
        )
        strip = self._strips.get(key)
        if strip is None:
            style = base
            if flashing:
                style += self.get_component_rich_style("job-table--flash")
            if at_cursor:
                style += self.get_component_rich_style("job-table--cursor")
            strip = self._strips[key] = self._strip(self._row(job, columns, now), width, style)
        return strip

    def _strip(self, text: Text | Cells, width: int, style: Style) -> Strip:
        if isinstance(text, list):
            # Each segment costs an escape sequence (Rich writes its whole style, then a reset):
            # blank cells take the row's style and neighbours of one style become one segment.
            # A full table frame at 160x45 went from ~18 KB to ~13 KB of terminal output, which
            # the terminal (tmux) must read and parse before it shows the frame (issue 10).
            segments: list[Segment] = []
            for cell, name in text:
                extra = _style(name)
                cell_style = style
                if extra is not None and not (cell.isspace() and _blank_invisible(extra)):
                    cell_style = style + extra
                if segments and segments[-1].style == cell_style:
                    segments[-1] = Segment(segments[-1].text + cell, cell_style)
                else:
                    segments.append(Segment(cell, cell_style))
            return Strip(segments).crop_extend(0, width, style)
        text.truncate(width)
        segments = [
            Segment(seg.text, style + seg.style if seg.style else style)
            for seg in text.render(self.app.console)
            if seg.text != "\n"
        ]
        return Strip(segments).crop_extend(0, width, style)
