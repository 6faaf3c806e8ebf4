"""``--read-only`` opens the store read-only (issue 10, item 10): the real app, driven by Pilot."""

from __future__ import annotations

import hashlib
from pathlib import Path

from monque_engine import ConnectionError
from monque_tui.console.app import MonqueConsole
from monque_tui.console.config import ConsoleConfig

from .conftest import running_console, wait_for


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


async def test_read_only_session_leaves_the_file_bytes_and_mtime_unchanged(seeded_url: str) -> None:
    path = Path(seeded_url.removeprefix("sqlite:///"))
    before = fingerprint(path)
    async with running_console(seeded_url, read_only=True) as (app, pilot):
        assert app.session.monque is not None and app.session.monque.display_url.endswith("?mode=ro")
        await pilot.press("2", "j", "j", "s", "1", "w")
        await pilot.pause()
        try:
            await app.session.monque.enqueue("email.send")
        except ConnectionError as error:
            assert "read-only" in str(error)
        else:
            raise AssertionError("a write went through a read-only console's store")
    assert fingerprint(path) == before


async def test_read_only_console_never_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    app = MonqueConsole(ConsoleConfig(url=f"sqlite:///{path}", read_only=True))
    async with app.run_test() as pilot:
        await wait_for(lambda: app.error is not None, timeout=10)
        await pilot.pause()
    assert app.error is not None and "does not exist" in app.error and "\n" not in app.error
    assert list(tmp_path.iterdir()) == []


def test_workers_in_the_console_still_open_the_store_for_writing(tmp_path: Path) -> None:
    """``--read-only`` with in-process workers (``--app``/``--demo``) only disables the keys."""
    config = ConsoleConfig(url=f"sqlite:///{tmp_path / 'jobs.db'}", read_only=True, start_workers=True)
    assert "mode=ro" not in config.url
