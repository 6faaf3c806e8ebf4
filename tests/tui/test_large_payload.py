"""A large payload never renders whole: the detail shows one bounded page, and paging reaches every byte."""

from __future__ import annotations

import json

from monque_engine import Monque
from monque_tui.console.payload import PAGE_CHARS, paginate
from monque_tui.console.screens.detail import JobDetailScreen

from .conftest import move_to, running_console, wait_for


def test_pages_are_bounded_and_join_back_to_the_whole_json() -> None:
    data = {"blob": "x" * 300_000, "items": [{"i": i, "text": "y" * 50} for i in range(5000)]}
    pages = paginate(data)
    assert all(len(page) <= PAGE_CHARS for page in pages.pages)
    assert "".join(pages.pages) == json.dumps(data, indent=2, sort_keys=True)
    assert pages.total_chars == sum(len(page) for page in pages.pages)
    assert len(paginate({}).pages) == 1


async def test_a_one_megabyte_payload_opens_a_page_at_a_time(seeded_url: str) -> None:
    data = {"rows": [{"i": i, "text": f"row {i} " + "z" * 90} for i in range(10_000)]}  # ~1.2 MB of JSON
    other = Monque(seeded_url, recover_stale_jobs=False)
    await other.initialize()
    job = await other.enqueue("big-payload", data)
    await other.close()
    async with running_console(seeded_url) as (app, pilot):
        await wait_for(lambda: app.jobs_screen.window.position(job.id) is not None)
        await move_to(app, pilot, job.id)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, JobDetailScreen) and app.screen.payload is not None, 20)
        detail = app.screen
        assert isinstance(detail, JobDetailScreen) and detail.payload is not None
        pages = len(detail.payload)
        assert pages > 100 and detail.page == 0
        await pilot.press("greater_than_sign", "greater_than_sign", "less_than_sign")
        assert detail.page == 1
        for _ in range(3):
            await pilot.press("less_than_sign")
        assert detail.page == 0
        assert detail.check_action("payload_page", (1,)) is True
        detail.page = pages - 2
        await pilot.press("greater_than_sign")
        assert detail.page == pages - 1
        assert detail.payload.page(detail.page).rstrip().endswith("}")
        await pilot.press("escape")
        await wait_for(lambda: app.screen is app.jobs_screen)
