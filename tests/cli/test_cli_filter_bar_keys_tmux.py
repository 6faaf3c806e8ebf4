"""Letters typed after Enter in the filter bar are text, never actions (issue 28).

Enter in the bar once moved the focus to the table, so the letters typed next acted as
keys: ``r`` then ``y`` retried a job. Here the real ``monque-tui`` runs on a SQLite file in
tmux; a whole filter is typed and applied with Enter, then ``r y c y`` follow. No dialog
may open and no stored job may change; the letters stay in the field.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

from test_cli_console_tmux import Tmux, pytestmark, tmux  # noqa: F401 - the fixture and the skip marks

from monque_engine import Monque
from monque_tui.demo.seed import seed_store


async def _snapshot(url: str) -> dict[str, tuple[str, int, int]]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        return {j.id: (j.status.value, j.fail_count, j.updated_at_ms) for j in await monque.get_jobs(limit=1000)}
    finally:
        await monque.close()


def test_letters_after_enter_in_the_filter_bar_fire_no_action(tmux: Tmux, tmp_path: Path) -> None:  # noqa: F811 - the imported fixture
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    asyncio.run(seed_store(url))
    before = asyncio.run(_snapshot(url))
    command = f"{shlex.quote(sys.executable)} -m monque_tui {shlex.quote(url)}; echo CONSOLE-EXIT=$?"
    tmux.send(command, "Enter")
    tmux.wait_for(lambda s: "send-email" in s and "failed" in s, "the jobs screen")
    tmux.send("5")  # the failed jobs: r would retry the one under the cursor
    tmux.wait_for(lambda s: "failed, sorted" in s or "failed," in s, "the failed tab")
    tmux.send("/")
    # Typed before the bar has focus, the letters would be keys (s sorts, e opens the errors view).
    tmux.wait_for(lambda s: "FROM..TO" in s, "the filter bar to open")
    tmux.send("-l", "send-email")
    tmux.wait_for(lambda s: "named 'send-email'" in s, "the name filter applied")
    tmux.send("Enter")
    tmux.send("-l", "rycy")
    # Had Enter left the bar, r would retry the failed job under the cursor and y confirm;
    # the letters land in the name field instead (the tabs line names what was typed).
    screen = tmux.wait_for(lambda s: "send-emailrycy" in s or "Retry" in s, "the letters to land")
    assert "send-emailrycy" in screen and "Retry" not in screen, screen
    tmux.send("C-q")  # quits from any focus, the bar's included
    tmux.wait_for(lambda s: "CONSOLE-EXIT=0" in s, "the console to quit")
    assert asyncio.run(_snapshot(url)) == before
