"""Both stores stay in small modules with one job each (issues 26 and 35): each store class
is a thin composition of the store contract's ports, with one module per port of the port's
name in both stores (SQLite: plumbing onto statements, the journal and the runners; MongoDB:
one class per port, each module with its methods and the documents they send), and no file
grows back into a class of thousands of lines."""

from __future__ import annotations

from pathlib import Path

import monque_engine.store.mongo as mongo_package
import monque_engine.store.sqlite as sqlite_package

STORE_DIR = Path(sqlite_package.__file__).resolve().parent
MONGO_DIR = Path(mongo_package.__file__).resolve().parent
MAX_LINES = 600
#: The ports of the store contract (issue 35): each has a module of its name in both stores.
PORTS = frozenset({"intake", "claims", "liveness", "reads", "management", "fleet", "retention", "feed", "admin"})


def _sizes(directory: Path) -> dict[str, int]:
    return {path.name: len(path.read_text().splitlines()) for path in sorted(directory.glob("*.py"))}


def test_no_module_of_the_sqlite_store_is_over_the_limit() -> None:
    sizes = _sizes(STORE_DIR)
    assert "store.py" in sizes and "statements.py" in sizes  # the glob does find the modules
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert too_long == {}, f"split these modules (at most {MAX_LINES} lines each): {too_long}"


def test_no_module_of_the_mongodb_store_is_over_the_limit() -> None:
    sizes = _sizes(MONGO_DIR)
    assert "store.py" in sizes and "documents.py" in sizes  # the glob does find the modules
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert too_long == {}, f"split these modules (at most {MAX_LINES} lines each): {too_long}"


def test_each_port_has_a_module_of_its_name_in_both_stores() -> None:
    mongo = {path.stem for path in MONGO_DIR.glob("*.py")}
    sqlite = {path.stem for path in STORE_DIR.glob("*.py")}
    assert PORTS - mongo == set(), "the MongoDB store has a module per port"
    assert PORTS - sqlite == set(), "the SQLite store has a module per port"
