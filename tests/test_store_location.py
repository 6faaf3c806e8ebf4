"""``locate_store`` and ``check_collection_name``: what a tool asks before it opens a store,
answered without creating or changing anything (the CLI's read-only commands rely on it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from monque_engine import Monque
from monque_engine.store import (
    InvalidCollectionNameError,
    InvalidStoreUrlError,
    StoreLocation,
    check_collection_name,
    locate_store,
)


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file in ``folder`` with its size and modification time (ns)."""
    return {entry.name: (entry.stat().st_size, entry.stat().st_mtime_ns) for entry in folder.iterdir()}


async def test_a_store_file_is_located_with_its_collections_and_left_as_it_was(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/jobs.db"
    for collection in ("monque_jobs", "other_jobs"):
        m = Monque(url, collection_name=collection)
        await m.initialize()
        await m.enqueue("email", {})
        await m.close()
    before = _listing(tmp_path)
    location = locate_store(url)
    assert location == StoreLocation("sqlite", f"{tmp_path}/jobs.db", False, True, ("monque_jobs", "other_jobs"))
    assert _listing(tmp_path) == before


async def test_a_collection_made_a_moment_ago_by_an_open_store_is_found(tmp_path: Path) -> None:
    """While a store is open its commits may still be in the WAL only: they count too."""
    url = f"sqlite:///{tmp_path}/jobs.db"
    first, second = Monque(url), Monque(url, collection_name="fresh_jobs")
    await first.initialize()
    try:
        await second.initialize()
        await second.enqueue("email", {})
        assert (tmp_path / "jobs.db-wal").stat().st_size > 0
        assert locate_store(url).collections == ("fresh_jobs", "monque_jobs")
    finally:
        await second.close()
        await first.close()


def test_a_missing_file_is_located_and_not_created(tmp_path: Path) -> None:
    location = locate_store(f"sqlite:///{tmp_path}/typo.db?mode=ro")
    assert location == StoreLocation("sqlite", f"{tmp_path}/typo.db", True, False, None)
    assert os.listdir(tmp_path) == []


def test_a_file_that_is_no_database_holds_no_known_collections(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("not a database\n")
    (tmp_path / "empty.db").write_bytes(b"")
    (tmp_path / "folder.db").mkdir()
    before = _listing(tmp_path)
    assert locate_store(f"sqlite:///{tmp_path}/notes.db").collections is None
    assert locate_store(f"sqlite:///{tmp_path}/empty.db").collections == ()  # SQLite reads it as empty
    folder = locate_store(f"sqlite:///{tmp_path}/folder.db")
    assert (folder.exists, folder.collections) == (True, None)
    assert _listing(tmp_path) == before


def test_a_relative_path_is_named_as_the_url_gives_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert locate_store("sqlite:///jobs.db").path == "jobs.db"


@pytest.mark.parametrize("url", ["jobs.db", "ftp://host/jobs", "sqlite://jobs.db", "sqlite:///jobs.db?mode=x"])
def test_a_url_no_store_can_use_is_refused(url: str) -> None:
    with pytest.raises(InvalidStoreUrlError):
        locate_store(url)


@pytest.mark.parametrize("name", ["", "bad-name", "1jobs", "jobs.v2", "x" * 64])
def test_sqlite_refuses_collection_names_no_table_can_have(name: str) -> None:
    with pytest.raises(InvalidCollectionNameError, match="Collection name"):
        check_collection_name("sqlite:///jobs.db", name)


def test_a_collection_name_is_checked_even_when_the_url_is_wrong() -> None:
    """The rule every store shares; the URL itself is open_store's to report."""
    assert check_collection_name("sqlite:///jobs.db", "monque_jobs") == "monque_jobs"
    assert check_collection_name("no-scheme", "any.name") == "any.name"
    with pytest.raises(InvalidCollectionNameError, match="is empty"):
        check_collection_name("no-scheme", " ")
