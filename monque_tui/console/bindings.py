"""Every key of the console, in one table.

Screens and widgets build their ``BINDINGS`` from here, the help screen renders it, and
the command palette offers it, so the footer, help and palette can never disagree.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from textual.binding import Binding, BindingType

#: Where a key applies: ``app`` everywhere, ``table`` the jobs table widget, ``back`` every
#: screen that closes with Escape; the rest name a screen (its ``SCOPES`` lists its own).
Scope = Literal["app", "table", "jobs", "detail", "queues", "errors", "workers", "back"]


class KeyAction(NamedTuple):
    """One key of the console: its action, its help line, and on which screens it applies."""

    keys: str
    action: str
    description: str
    group: str
    scopes: tuple[Scope, ...]
    #: Changes jobs in the store: disabled (greyed) in read-only mode.
    mutating: bool = False
    #: Shown in the footer (movement keys are not).
    show: bool = True
    #: Offered in the command palette.
    palette: bool = True
    key_display: str | None = None
    #: Longer text for help and the palette.
    help: str = ""
    #: Footer priority when the terminal is too narrow for every shown key: lower is kept
    #: first (``ConsoleFooter`` drops the highest ranks whole, never cutting a label; every
    #: key stays in ``?`` and the palette).
    rank: int = 50


REGISTRY: tuple[KeyAction, ...] = (
    # Moving around the table
    KeyAction("up,k", "cursor_up", "Up", "Move", ("table",), show=False, palette=False, key_display="↑/k"),
    KeyAction("down,j", "cursor_down", "Down", "Move", ("table",), show=False, palette=False, key_display="↓/j"),
    KeyAction(
        "left,h",
        "wide_left",
        "Left",
        "Move",
        ("table",),
        show=False,
        palette=False,
        key_display="←/h",
        help="In the wide view (z): scroll left",
    ),
    KeyAction(
        "right,l",
        "wide_right",
        "Right",
        "Move",
        ("table",),
        show=False,
        palette=False,
        key_display="→/l",
        help="In the wide view (z): scroll right",
    ),
    KeyAction("pageup", "page_up", "Page up", "Move", ("table",), show=False, palette=False, key_display="PgUp"),
    KeyAction("pagedown", "page_down", "Page down", "Move", ("table",), show=False, palette=False, key_display="PgDn"),
    KeyAction(
        "home,g",
        "first",
        "First job",
        "Move",
        ("table",),
        show=False,
        key_display="g",
        help="Jump to the first job of the listing",
    ),
    KeyAction(
        "end,G",
        "last",
        "Last job",
        "Move",
        ("table",),
        show=False,
        key_display="G",
        help="Jump to the last job of the listing",
    ),
    KeyAction(
        "enter",
        "open_job",
        "Detail",
        "Move",
        ("jobs",),
        key_display="⏎",
        help="Open the job under the cursor: payload, error, timestamps, owner, schedule",
        rank=4,
    ),
    # What the table shows
    KeyAction("1", "status('all')", "All", "View", ("jobs",), show=False, help="Show jobs of every status"),
    KeyAction("2", "status('pending')", "Pending", "View", ("jobs",), show=False, help="Show pending jobs"),
    KeyAction(
        "3", "status('processing')", "Processing", "View", ("jobs",), show=False, help="Show processing (claimed) jobs"
    ),
    KeyAction("4", "status('completed')", "Completed", "View", ("jobs",), show=False, help="Show completed jobs"),
    KeyAction("5", "status('failed')", "Failed", "View", ("jobs",), show=False, help="Show failed jobs"),
    KeyAction("6", "status('cancelled')", "Cancelled", "View", ("jobs",), show=False, help="Show cancelled jobs"),
    KeyAction(
        "s",
        "next_sort",
        "Sort",
        "View",
        ("jobs",),
        help="Sort by created, updated or next run (cycles); on the processing tab also by run time",
        rank=20,
    ),
    KeyAction("S", "reverse_sort", "Reverse", "View", ("jobs",), show=False, help="Flip the sort direction"),
    KeyAction(
        "slash",
        "filter",
        "Filter",
        "View",
        ("jobs",),
        key_display="/",
        help="Filter by job name (exact; Tab completes it) or name glob (email*, report-?: the view says "
        "how many names it matched), id (start or end) or unique key, time ranges "
        "FROM..TO such as: created -2h..  updated today  next now..+1h (no offset = UTC), then payload "
        "terms: data.customer_id missing, data.tenant = acme, data.amount = 5 (in the same field), and "
        "'contains': payload or error text (type or message), ASCII case ignored, applied after a short "
        "pause in typing or at once on Enter",
        rank=5,
    ),
    KeyAction(
        "escape",
        "clear_filter",
        "Clear filter",
        "View",
        ("jobs",),
        show=False,
        key_display="Esc",
        help="Clear the name, id/key, time and contains filters (and an errors-view group); while a contains "
        "search is read, stop it first (the rows found so far stay)",
    ),
    KeyAction("p", "toggle_pause", "Pause", "View", ("jobs",), help="Freeze or resume live updates", rank=21),
    KeyAction(
        "z",
        "toggle_wide",
        "Wide",
        "View",
        ("jobs",),
        help="Wide view: every cell whole (names, owners, errors), ←/→ scroll sideways; z again fits the screen",
        rank=24,
    ),
    # Marking
    KeyAction(
        "space",
        "toggle_mark",
        "Mark",
        "Mark",
        ("jobs",),
        key_display="␣",
        help="Mark or unmark the job under the cursor",
        rank=22,
    ),
    KeyAction(
        "a", "mark_loaded", "Mark loaded", "Mark", ("jobs",), show=False, help="Mark every loaded job of the view"
    ),
    KeyAction("u", "clear_marks", "Unmark all", "Mark", ("jobs",), show=False, help="Clear every mark"),
    # Acting on jobs
    KeyAction(
        "c",
        "act('cancel')",
        "Cancel",
        "Act",
        ("jobs", "detail"),
        mutating=True,
        help="Cancel pending jobs, or stop running ones (their owner cancels the handler): the marked ones, "
        "or else the one under the cursor",
        rank=10,
    ),
    KeyAction(
        "r",
        "act('retry')",
        "Retry",
        "Act",
        ("jobs", "detail"),
        mutating=True,
        help="Retry failed or cancelled jobs: the marked ones, or else the one under the cursor",
        rank=11,
    ),
    KeyAction(
        "t",
        "act('reschedule')",
        "Reschedule",
        "Act",
        ("jobs", "detail"),
        mutating=True,
        help="Move pending jobs' next run (+10m, +2h, or an ISO time)",
        rank=13,
    ),
    KeyAction(
        "d",
        "act('delete')",
        "Delete",
        "Act",
        ("jobs", "detail"),
        mutating=True,
        help="Delete jobs: the marked ones, or else the one under the cursor",
        rank=12,
    ),
    KeyAction(
        "C",
        "act_all('cancel')",
        "Cancel all",
        "Act on everything matching",
        ("jobs",),
        mutating=True,
        show=False,
        help="Cancel every pending job matching the view (every filter of the bar), as one bulk action; "
        "its running jobs are asked about apart (stop)",
    ),
    KeyAction(
        "R",
        "act_all('retry')",
        "Retry all",
        "Act on everything matching",
        ("jobs",),
        mutating=True,
        show=False,
        help="Retry every failed or cancelled job matching the view (every filter of the bar)",
    ),
    KeyAction(
        "D",
        "act_all('delete')",
        "Delete all",
        "Act on everything matching",
        ("jobs",),
        mutating=True,
        show=False,
        help="Delete every job matching the view (every filter of the bar); never more than the confirmed count",
    ),
    # Detail screen
    KeyAction(
        "greater_than_sign",
        "payload_page(1)",
        "Next page",
        "Detail",
        ("detail",),
        key_display=">",
        help="A large payload is shown a page at a time: the next page",
        rank=18,
    ),
    KeyAction(
        "less_than_sign",
        "payload_page(-1)",
        "Previous page",
        "Detail",
        ("detail",),
        key_display="<",
        help="The previous page of a large payload",
        rank=19,
    ),
    # Errors: attempt history on the detail screen, the errors view (issue 12)
    KeyAction(
        "right_square_bracket",
        "attempt(1)",
        "Next attempt",
        "Detail",
        ("detail",),
        key_display="]",
        help="Select the next (newer) attempt of the timeline and show its traceback",
        rank=16,
    ),
    KeyAction(
        "left_square_bracket",
        "attempt(-1)",
        "Previous attempt",
        "Detail",
        ("detail",),
        key_display="[",
        help="Select the previous (older) attempt of the timeline and show its traceback",
        rank=15,
    ),
    KeyAction(
        "right_curly_bracket",
        "traceback_page(1)",
        "Next traceback page",
        "Detail",
        ("detail",),
        key_display="}",
        show=False,
        help="A traceback longer than a page (only rows written by other programs hold one; ours are "
        "bounded) is shown a page at a time: the next page",
    ),
    KeyAction(
        "left_curly_bracket",
        "traceback_page(-1)",
        "Previous traceback page",
        "Detail",
        ("detail",),
        key_display="{",
        show=False,
        help="The previous page of a long traceback",
    ),
    KeyAction(
        "y",
        "copy_traceback",
        "Copy traceback",
        "Detail",
        ("detail",),
        help="Copy the selected attempt's type, message and full traceback to the clipboard (OSC 52: "
        "works in terminals that allow it; the traceback pane's text can also be selected with the mouse)",
        rank=17,
    ),
    KeyAction(
        "enter",
        "open_group",
        "Show jobs",
        "Errors",
        ("errors",),
        key_display="⏎",
        help="Show the jobs of the error group under the cursor in the jobs table (Esc there clears it)",
        rank=4,
    ),
    KeyAction(
        "R",
        "group_act('retry')",
        "Retry group",
        "Errors",
        ("errors",),
        mutating=True,
        help="Retry every failed job of the group under the cursor (counted, confirmed, never more than confirmed)",
        rank=10,
    ),
    KeyAction(
        "D",
        "group_act('delete')",
        "Delete group",
        "Errors",
        ("errors",),
        mutating=True,
        help="Delete every failed and retrying job of the group under the cursor (counted, confirmed, never "
        "more than confirmed)",
        rank=12,
    ),
    # Queues screen
    KeyAction(
        "enter",
        "open_queue",
        "Show jobs",
        "Queues",
        ("queues",),
        key_display="⏎",
        help="Show the jobs of the queue under the cursor",
        rank=4,
    ),
    # Screens
    KeyAction(
        "w",
        "show_queues",
        "Queues",
        "Screens",
        ("app",),
        help="Per-name counts, health (due, oldest due, rates, 24 h sparkline), paused names, schedules",
        rank=31,
    ),
    # Fleet and queue control (issue 13): workers, dead owners, paused names, whole-view marks, export
    KeyAction(
        "W",
        "show_workers",
        "Workers",
        "Screens",
        ("app",),
        help="Every worker instance on the store (other processes and Node owners too), live or dead",
        rank=32,
    ),
    KeyAction(
        "z",
        "toggle_wide",
        "Wide",
        "View",
        ("workers", "queues", "errors"),
        help="Every column whole: on Workers every name, on Errors every message (the table scrolls sideways); "
        "z again fits the screen",
        rank=24,
    ),
    KeyAction(
        "x",
        "release_owner",
        "Release owner",
        "Fleet",
        ("workers",),
        mutating=True,
        help="Return a dead owner's processing jobs to pending now (asks with the count; a live owner "
        "is refused by the store)",
        rank=10,
    ),
    KeyAction(
        "x",
        "release_owner",
        "Release owner",
        "Fleet",
        ("detail",),
        mutating=True,
        show=False,
        help="On a processing job whose owner is dead: release that owner's jobs now (as on Workers)",
        rank=10,
    ),
    KeyAction(
        "P",
        "toggle_name_pause",
        "Pause name",
        "Fleet",
        ("queues",),
        mutating=True,
        help="Pause or resume the job name under the cursor for every Python worker; running jobs finish",
        rank=10,
    ),
    KeyAction(
        "P",
        "toggle_name_pause",
        "Pause name",
        "Fleet",
        ("jobs",),
        mutating=True,
        show=False,
        help="Pause or resume the jobs view's name filter for every Python worker; running jobs finish",
        rank=10,
    ),
    KeyAction(
        "A",
        "mark_matching",
        "Mark all matching",
        "Mark",
        ("jobs",),
        show=False,
        help="Mark every job of the view (not only the loaded rows); c, r and d then act on all of them",
    ),
    KeyAction(
        "E",
        "export",
        "Export",
        "View",
        ("jobs",),
        show=False,
        help="Write every job of the view to a JSON Lines or CSV file (the path's extension decides)",
    ),
    KeyAction(
        "e",
        "show_errors",
        "Errors",
        "Screens",
        ("app",),
        help="Failed and retrying jobs grouped by name, exception type and message, with counts and the last hour",
        rank=30,
    ),
    KeyAction(
        "question_mark", "show_help", "Help", "Screens", ("app",), key_display="?", help="Every key, grouped", rank=0
    ),
    KeyAction(
        "ctrl+p,colon",
        "command_palette",
        "Commands",
        "Screens",
        ("app",),
        key_display="^p",
        palette=False,
        help="Search every action and screen",
        rank=1,
    ),
    KeyAction("escape", "back", "Back", "Screens", ("back",), key_display="Esc", help="Close this screen", rank=2),
    KeyAction("q,ctrl+q", "quit", "Quit", "Screens", ("app",), help="Leave the console", rank=3),
)

BY_ACTION: dict[str, KeyAction] = {}
for _spec in REGISTRY:
    BY_ACTION.setdefault(_spec.action.split("(")[0], _spec)
MUTATING_ACTIONS: frozenset[str] = frozenset(s.action.split("(")[0] for s in REGISTRY if s.mutating)
#: Footer priority per action as bound (``act('cancel')``), lowest rank of its entries.
FOOTER_RANKS: dict[str, int] = {}
#: The key the footer shows for an action with several (``q`` for Quit, not ``ctrl+q``).
FOOTER_KEYS: dict[str, str] = {}
for _spec in REGISTRY:
    FOOTER_RANKS[_spec.action] = min(_spec.rank, FOOTER_RANKS.get(_spec.action, _spec.rank))
    FOOTER_KEYS.setdefault(_spec.action, _spec.keys.split(",")[0])


def bindings_for(*scopes: Scope) -> list[BindingType]:
    """Textual bindings for the registry entries of these scopes."""
    return [
        Binding(
            spec.keys,
            spec.action,
            spec.description,
            show=spec.show,
            key_display=spec.key_display,
            priority=spec.action == "quit",
        )
        for spec in REGISTRY
        if any(scope in spec.scopes for scope in scopes)
    ]


def entries_for(*scopes: Scope) -> list[KeyAction]:
    return [spec for spec in REGISTRY if any(scope in spec.scopes for scope in scopes)]


def display_keys(spec: KeyAction) -> str:
    if spec.key_display:
        return spec.key_display
    names = {"slash": "/", "question_mark": "?", "space": "space", "escape": "Esc"}
    return " / ".join(names.get(key, key) for key in spec.keys.split(","))
