"""The job detail shows what the handler returned (issue 38 part 3): a ``Result`` panel with
the value as indented JSON, and none for a job without a result. Under Pilot, on a real
SQLite file holding jobs as a worker leaves them (``import_jobs``)."""

from __future__ import annotations

from monque_engine import Job, JobStatus, Monque
from monque_tui.demo.seed import SEED_NOW_MS

from .conftest import open_detail, running_console
from .test_confirm_width import screen_text

WITH = "65a1b2c3d4e5f60718290011"
WITHOUT = "65a1b2c3d4e5f60718290012"


async def _store(url: str) -> None:
    now = SEED_NOW_MS
    jobs = [
        Job(WITH, "report.build", {"n": 1}, JobStatus.COMPLETED, now - 60_000, now - 60_000, now - 30_000,
            result={"rows": 1234, "file": "reports/r-1.csv"}),
        Job(WITHOUT, "report.build", {"n": 2}, JobStatus.COMPLETED, now - 60_000, now - 60_000, now - 30_000),
    ]  # fmt: skip
    m = Monque(url, recover_stale_jobs=False)
    await m.initialize()
    try:
        assert await m.import_jobs(jobs) == 2
    finally:
        await m.close()


async def test_the_detail_shows_a_result_and_no_panel_without_one(store_url: str) -> None:
    await _store(store_url)
    async with running_console(store_url) as (app, pilot):
        await open_detail(app, pilot, WITH)
        text = screen_text(app)
        assert "Result" in text and '"rows": 1234' in text and '"file": "reports/r-1.csv"' in text
        await pilot.press("escape")
        await open_detail(app, pilot, WITHOUT)
        assert "Result" not in screen_text(app)
