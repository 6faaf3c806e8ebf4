"""Inside an error group, the tabs line tells the group apart and keeps its tabs' labels
(a console probe on an incident store):

- at 80 columns three groups of one name and type ("TimeoutError: gateway.example… timed
  out (…live_100004)", "(…zeta)", "(…ch_1)") all read "TimeoutError: gateway.example…": the
  cut kept the start, and the end that differs went; it is cut in the middle now;
- at 160 columns the status tabs were bare counts ("1 71 2 0 3 0 …"), no sign of which is
  which; they keep labels, and whole tabs give way to "…" first.
"""

from __future__ import annotations

from textual.app import App, ComposeResult

from monque_engine import JobStatus, QueueStats
from monque_tui.console.widgets.status_tabs import StatusTabs

LABEL = "payment.gateway TimeoutError: gateway.example.com timed out after 30 s (batch_1)"


class _Tabs(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusTabs()


async def _line(width: int, label: str, active: JobStatus | None = JobStatus.FAILED) -> str:
    app = _Tabs()
    async with app.run_test(size=(width, 3)) as pilot:
        tabs = app.query_one(StatusTabs)
        tabs.stats = QueueStats(pending=0, processing=0, completed=0, failed=540, cancelled=0, total=540)
        tabs.active = active
        tabs.group = label
        await pilot.pause()
        return tabs.render().plain


async def test_at_80_columns_the_end_that_tells_groups_apart_stays() -> None:
    line = await _line(80, LABEL + " (pattern: gateway.example.com timed out after <n> s (<str>))", active=None)
    assert len(line) <= 80, line
    shown = line.split(" — ")[0]
    assert shown.startswith("group payment.gateway TimeoutError: ") and "…" in shown, line
    assert shown.endswith("(batch_1)"), line
    assert "540 failed · 0 retrying" in line


async def test_at_160_columns_the_tabs_keep_their_labels() -> None:
    line = await _line(160, "thumbnail.gen ValueError: live failure for n=100002 (pattern: …)")
    tabs = line.split(" │ ", 1)[1]
    assert "All 540" in tabs and "Fai 540" in tabs, line  # labelled, not "1 540 2 0 …"


def test_with_room_the_name_and_type_stay_whole_and_the_message_is_cut_in_its_middle() -> None:
    from monque_tui.console.widgets.status_tabs import group_label_in

    shown = group_label_in(LABEL, 60)
    assert (
        len(shown) == 60 and shown.startswith("payment.gateway TimeoutError: gateway") and shown.endswith("(batch_1)")
    )
