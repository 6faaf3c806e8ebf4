"""What the session tells its screens: plain named tuples, no Textual.

The app turns each into a Textual message (``SessionMessage``) for the screens that care;
tests read them directly.
"""

from __future__ import annotations

from typing import NamedTuple

from monque_engine import FeedState, QueueStats

from ..query import JobQuery
from ..window import JobWindow, WindowDiff


class Connected(NamedTuple):
    """The store is open: the URL as shown (password masked) and this process's workers."""

    display_url: str
    workers: tuple[str, ...] = ()


class QueryChanged(NamedTuple):
    """The view's query changed (a tab, a filter, a sort)."""

    query: JobQuery


class WindowLoaded(NamedTuple):
    """A new window replaced the old one (a query change, a jump, a reload)."""

    window: JobWindow
    #: Put the cursor on this job if it is in the window.
    cursor_id: str | None = None
    at: str = "top"  # "top" | "bottom" | "keep" (the cursor's screen line, after a reload)


class WindowExtended(NamedTuple):
    """Rows were added at an edge of the current window (``shifted`` rows above the old first row)."""

    window: JobWindow
    shifted: int


class WindowChanged(NamedTuple):
    """Live changes edited the current window in place."""

    window: JobWindow
    diff: WindowDiff
    flash: frozenset[str] = frozenset()


class JobsChanged(NamedTuple):
    """These jobs changed (``reload``: too many, or history lost: anything may have)."""

    job_ids: frozenset[str]
    reload: bool = False


class StatsChanged(NamedTuple):
    """New counts for the tabs, and how many jobs match the view when it is filtered."""

    stats: QueueStats
    #: Jobs matching the whole view; None when the view is unfiltered (the tabs say it).
    matching: int | None
    query: JobQuery


class FeedChanged(NamedTuple):
    """The change feed's state changed (live, polling, lost), with the reason if any."""

    state: FeedState | str
    error: str | None = None


class MarksChanged(NamedTuple):
    """How many rows are marked now."""

    marked: int
    #: "Mark all matching": ``marked`` is every job of the view, not marked rows.
    everything: bool = False


class Notice(NamedTuple):
    """A sentence for the operator (``severity``: information, warning, error)."""

    message: str
    severity: str = "information"
    title: str = ""
    #: Seconds on screen (None: the app's default for the severity).
    timeout: float | None = None


class QueryFailed(NamedTuple):
    """The store refused the view's query (a MongoDB text search hit its maxTimeMS): one line to show inline."""

    message: str
    query: object
    #: Also shown in the filter bar (a query the filter caused); False: the table only (the store failed).
    in_filter: bool = True


class SearchProgressed(NamedTuple):
    """A read of a text view in steps moved on (``search.py``): ``what`` it is (``"count"``:
    the view's counts, ``"page"``: its rows, ``"bulk"``: a bulk action's count), how many jobs
    it has read of about how many, and whether it ended (done, stopped or failed)."""

    what: str
    query: JobQuery
    read: int
    total: int
    ended: bool = False
    #: Ended before its answer: the operator stopped it (Esc) or left the view.
    stopped: bool = False


class StoreStateChanged(NamedTuple):
    """The store stopped answering (``error``: why, in one line) or answers again (None).

    ``lost``: for good (``StoreLostError``: its SQLite file was deleted or replaced); only a
    restart opens the file now at that path. ``damaged``: lost because the file is damaged
    (``StoreDamagedError``): a restart does not help, a backup does."""

    error: str | None
    lost: bool = False
    damaged: bool = False


class PausedNamesChanged(NamedTuple):
    """The store's paused job names changed (polled with the stats: pauses are not in the job feed)."""

    names: tuple[str, ...]


class Alerts(NamedTuple):
    """What the alerts line says (``session/alerts.py`` reads and draws it)."""

    #: Dead instances still holding jobs: (id, jobs held).
    dead: tuple[tuple[str, int], ...] = ()
    #: Names with jobs due now and no live registered consumer: (name, due).
    no_worker: tuple[tuple[str, int], ...] = ()
    #: Paused names with jobs due now: (name, due).
    paused: tuple[tuple[str, int], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.dead or self.no_worker or self.paused)


class AlertsChanged(NamedTuple):
    """The alerts line changed: dead workers holding jobs, names due with no worker, paused names due."""

    alerts: Alerts


SessionEvent = (
    Connected
    | QueryChanged
    | WindowLoaded
    | WindowExtended
    | WindowChanged
    | JobsChanged
    | StatsChanged
    | FeedChanged
    | MarksChanged
    | Notice
    | QueryFailed
    | SearchProgressed
    | PausedNamesChanged
    | StoreStateChanged
    | AlertsChanged
)
