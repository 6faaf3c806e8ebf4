"""Export of the view from the console (issue 13 item 6): `e`, a typed path, a worker thread.

Real SQLite files and a real app driven by Pilot; the written files are read back and
compared with the store.
"""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from monque_engine import JobListFilter, JobStatus, Monque
from monque_tui.console.query import JobQuery
from monque_tui.console.screens.export import ExportScreen
from monque_tui.console.session.export import ExportError, export_view

from .conftest import running_console, store_jobs, wait_for
from .toasts import said, said_first


async def test_e_writes_the_failed_view_to_csv(seeded_url: str, tmp_path: Path) -> None:
    jobs = await store_jobs(seeded_url)
    failed = {job_id for job_id, job in jobs.items() if job.status is JobStatus.FAILED}
    target = tmp_path / "failed.csv"
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("5")
        await wait_for(lambda: app.jobs_screen.window.query.status is JobStatus.FAILED)
        await pilot.press("E")
        await wait_for(lambda: isinstance(app.screen, ExportScreen))
        assert app.screen.query_one(Input).value.startswith("./monque-export-20260115-120000")
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await wait_for(lambda: said_first(app, f"Exported {len(failed)} jobs"), timeout=20)
    with target.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["_id"] for row in rows} == failed
    assert {row["status"] for row in rows} == {"failed"}


async def test_the_default_path_writes_json_lines_of_every_job_and_never_overwrites(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    jobs = await store_jobs(seeded_url)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        for attempt in (1, 2):
            await pilot.press("E")
            await wait_for(lambda: isinstance(app.screen, ExportScreen))
            await pilot.press("enter")
            if attempt == 1:
                await wait_for(lambda: said_first(app, "Exported"), timeout=20)
            else:
                # Said under the input, the dialog still open to type another path (probe 7).
                await wait_for(lambda: "already exists" in str(app.screen.query_one("#export-error").content))
                assert isinstance(app.screen, ExportScreen)
    written = list(tmp_path.glob("monque-export-*.jsonl"))
    assert [p.name for p in written] == ["monque-export-20260115-120000.jsonl"]
    lines = [json.loads(line) for line in written[0].read_text().splitlines()]
    assert {doc["_id"] for doc in lines} == set(jobs)


async def test_export_view_streams_in_pages_with_progress(store_url: str, tmp_path: Path) -> None:
    monque = Monque(store_url, recover_stale_jobs=False)
    await monque.initialize()
    await monque.enqueue_many([{"name": "many", "data": {"n": n}} for n in range(1200)])
    await monque.enqueue("other", {})
    await monque.close()
    calls: list[tuple[int, int]] = []
    query = JobQuery(name="many")
    # The console runs it in a worker thread; here a thread of the test's own.
    count = await asyncio.to_thread(
        export_view,
        store_url,
        {},
        query.list_filter(),
        str(tmp_path / "m.jsonl"),
        lambda written, total: calls.append((written, total)),
    )
    assert count == 1200
    assert calls[0] == (0, 1200) and calls[-1] == (1200, 1200) and len(calls) >= 4  # pages of 500
    with pytest.raises(ExportError, match="does not exist"):
        export_view(store_url, {}, JobListFilter(), str(tmp_path / "missing" / "x.csv"))


@pytest.mark.parametrize("answer", ["", "   ", "{existing}", "{tmp}/no/such/folder/x.jsonl"])
async def test_an_unusable_path_is_explained_in_the_dialog_which_stays_open(
    seeded_url: str, tmp_path: Path, answer: str
) -> None:
    """Enter on an empty path closed the dialog without a word; an existing file was said after
    it had closed, the typed path lost (probe 7). The dialog says why and waits for another."""
    existing = tmp_path / "old.jsonl"
    existing.write_text("keep me\n")
    typed = answer.format(existing=existing, tmp=tmp_path)
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("E")
        await wait_for(lambda: isinstance(app.screen, ExportScreen))
        dialog = app.screen
        dialog.query_one(Input).value = typed
        await pilot.press("enter")
        await wait_for(lambda: bool(str(dialog.query_one("#export-error").content)))
        await pilot.pause()
        assert app.screen is dialog and dialog.query_one("#export-error").display
        said = str(dialog.query_one("#export-error").content)
        assert any(word in said for word in ("type a file path", "already exists", "does not exist")), said
        dialog.query_one(Input).value = str(tmp_path / "new.jsonl")
        await pilot.press("enter")
        await wait_for(lambda: said_first(app, "Exported"), timeout=20)
    assert existing.read_text() == "keep me\n"
    assert (tmp_path / "new.jsonl").stat().st_size > 0


async def test_the_export_path_is_edited_not_wiped_and_its_extension_follows_the_format(
    seeded_url: str, tmp_path: Path
) -> None:
    """The whole path was selected, so one Backspace wiped it; the format could be chosen only
    by typing the extension, and nothing said which one the path would write (issue 40)."""
    async with running_console(seeded_url, notifications=True) as (app, pilot):
        await pilot.press("E")
        await wait_for(lambda: isinstance(app.screen, ExportScreen))
        dialog = app.screen
        field = dialog.query_one(Input)
        prefilled = field.value
        assert prefilled.endswith(".jsonl")
        await pilot.press("backspace")
        assert field.value == prefilled[:-1]  # one character gone, not the path
        field.value = str(tmp_path / "failed.jsonl")
        await pilot.pause()
        assert "JSON Lines" in str(dialog.query_one("#export-format", Static).render())
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert field.value == str(tmp_path / "failed.csv")
        assert "CSV" in str(dialog.query_one("#export-format", Static).render())
        await pilot.press("enter")
        await wait_for(lambda: (tmp_path / "failed.csv").exists() and said(app, "Exported"))
    header = next(csv.reader((tmp_path / "failed.csv").read_text().splitlines()))
    assert header[:3] == ["_id", "name", "status"]  # CSV, not JSON Lines
