"""A SQLite read says what kind of read it is, and the kind decides what it does about the
inbox (issue 35, ADR 0014, ``store/sqlite/readkind.py``). Until then every call chose
``queued=`` and ``combine=`` itself, and a wrong choice gave wrong counts without an error.

Real files and a real crashed producer (as test_sqlite_inbox.py), so the inbox holds rows."""

from __future__ import annotations

import ast
import operator
import sqlite3
from pathlib import Path

import monque_engine.store.sqlite as sqlite_package
from monque_engine import Monque
from monque_engine.store.base import StoreListFilter, StoreSelector
from monque_engine.store.sqlite import liveness, reads
from monque_engine.store.sqlite.inbox import STREAK
from monque_engine.store.sqlite.readkind import Jobs, Settled, Tally
from monque_engine.store.sqlite.schema import Tables
from tests.test_sqlite_inbox import PRODUCER, counts, run_child

STORE_DIR = Path(sqlite_package.__file__).resolve().parent


def _read_calls(source: str) -> list[ast.Call]:
    """Calls of the store's read path: ``read(...)`` and ``self._read(...)``."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            called = node.func
            if (isinstance(called, ast.Name) and called.id == "read") or (
                isinstance(called, ast.Attribute) and called.attr == "_read"
            ):
                calls.append(node)
    return calls


def test_every_read_passes_only_its_read() -> None:
    """No call chooses the inbox treatment: one argument, the read (its kind says the rest)."""
    chosen = {
        f"{path.name}:{call.lineno}: {ast.unparse(call)}"
        for path in sorted(STORE_DIR.glob("*.py"))
        for call in _read_calls(path.read_text())
        if len(call.args) != 1 or call.keywords
    }
    assert _read_calls((STORE_DIR / "store.py").read_text())  # the walk does find the calls
    assert chosen == set(), f"pass a readkind.Jobs / Tally / Settled, nothing else: {chosen}"


def test_the_reads_carry_the_kind_their_sql_needs() -> None:
    t = Tables("monque_jobs")
    assert isinstance(reads.get(t, "x"), Jobs)
    assert isinstance(reads.count(t, StoreListFilter(name="a")), Tally)
    assert isinstance(reads.next_due(t, ["a"]), Tally)
    assert isinstance(reads.pending_health(t, 0), Tally)
    assert isinstance(liveness.has_live_claim(t, "owner", 0), Settled)
    assert isinstance(reads.kept_count(t, StoreListFilter(name="a")), Settled)
    assert isinstance(reads.count_as_of(t, StoreSelector(name="a")), Tally)
    # Under a bound, the job table alone: an inbox row has no change stamp until it moves.
    assert isinstance(reads.count_as_of(t, StoreSelector(name="a", as_of=5)), Settled)


async def test_each_kind_treats_the_inbox_as_it_says(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    count = 20
    child = run_child(PRODUCER, str(db), str(STREAK), str(count), "crash")
    assert child.returncode == 0 and child.stdout.strip() == "enqueued", child.stderr
    assert counts(db) == (STREAK, count)  # STREAK job rows, then ``count`` inbox rows

    def jobs(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT count(*) FROM monque_jobs").fetchone()[0])

    m = Monque(f"sqlite:///{db}?mode=ro", recover_stale_jobs=False)
    await m.initialize()
    try:
        store = m.store
        assert await store._read(Jobs(jobs)) == STREAK + count  # type: ignore[attr-defined]  # over the view
        assert await store._read(Tally(jobs, operator.add)) == STREAK + count  # type: ignore[attr-defined]
        assert await store._read(Settled(jobs)) == STREAK  # type: ignore[attr-defined]  # job table alone
    finally:
        await m.close()
    assert counts(db) == (STREAK, count)  # read-only: nothing moved
