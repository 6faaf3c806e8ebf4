"""The SQLite store stays in small modules with one job each (issue 26): the store class is
a thin mapping of the store interface onto statements, the journal, claims, completions,
intake, reads, management and fleet modules, and no file grows back into a class of
thousands of lines."""

from __future__ import annotations

from pathlib import Path

import monque_engine.store.sqlite as sqlite_package

STORE_DIR = Path(sqlite_package.__file__).resolve().parent
MAX_LINES = 600


def test_no_module_of_the_sqlite_store_is_over_the_limit() -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in sorted(STORE_DIR.glob("*.py"))}
    assert "store.py" in sizes and "statements.py" in sizes  # the glob does find the modules
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert too_long == {}, f"split these modules (at most {MAX_LINES} lines each): {too_long}"
