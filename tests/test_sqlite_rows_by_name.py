"""The SQLite store reads its rows by name, never by position (issue 35): ``row[17]`` says
nothing, and read from a statement whose column list moved it silently reads another column.

A job row is read through ``jobrow``'s places (derived from ``JOB_COLUMNS``, which every job
statement lists) or unpacked into names next to the statement that shaped it; a one-column
result is unpacked too (``(count,) = ....fetchone()``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import monque_engine.store.sqlite as sqlite_package
from monque_engine.store.sqlite import jobrow, queries
from monque_engine.store.sqlite.schema import CLAIM_COLUMNS, JOB_COLUMNS

STORE_DIR = Path(sqlite_package.__file__).resolve().parent
#: Names that hold a list or a tuple that is no fetched row, where a literal index is the
#: plain way to say "the first" or "the last": a list of rows or of held files (its first
#: item is then unpacked into names), a chunk's jobs and one column's values of them, a
#: ``[jobs, duration]`` tally being summed, a guard's statuses, a status word list.
NOT_ROWS = frozenset({"found", "held", "rows", "ready", "values", "part", "words", "moved", "statuses"})


def positional_reads(source: str) -> list[str]:
    """Every subscript by an integer literal (``x[3]``, ``x[-1]``) whose subject is not one of
    ``NOT_ROWS``, as ``line: text``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Subscript):
            continue
        index = node.slice
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            index = index.operand
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in NOT_ROWS:
            continue
        found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_detector_finds_what_it_must() -> None:
    source = "def f(conn, row, rows):\n    a = row[17]\n    b = conn.execute('x').fetchone()[0]\n    c = rows[0][2]\n"
    assert positional_reads(source) == ["2: row[17]", "3: conn.execute('x').fetchone()[0]", "4: rows[0][2]"]
    assert positional_reads("def f(row):\n    return row[jobrow.STATUS], row[:3], rows[-1]\n") == []


def test_no_sqlite_module_reads_a_row_by_position() -> None:
    paths = sorted(STORE_DIR.glob("*.py"))
    assert any(path.name == "claims.py" for path in paths)  # the glob does find the modules
    reads = {path.name: hits for path in paths if (hits := positional_reads(path.read_text()))}
    assert reads == {}, f"read these rows by name (jobrow's places, or unpack the row into names): {reads}"


def test_jobrow_places_follow_job_columns() -> None:
    assert [getattr(jobrow, column.upper()) for column in JOB_COLUMNS] == list(range(len(JOB_COLUMNS)))


@pytest.mark.parametrize(
    ("mapping", "columns"), [("claimed_row_to_job", JOB_COLUMNS), ("claim_row_to_job", CLAIM_COLUMNS)]
)
def test_the_per_job_mapping_unpacks_the_row_in_job_columns_order(mapping: str, columns: tuple[str, ...]) -> None:
    """``claimed_row_to_job`` unpacks every row it builds, and ``claim_row_to_job`` every
    claim's row (once per claimed job): their names must be the columns their rows hold, in
    order (JOB_COLUMNS; a claim's CLAIM_COLUMNS), or a Job gets another column's value."""
    tree = ast.parse(Path(queries.__file__).read_text())
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == mapping)
    unpacks = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and node.value.id == "row"
        and isinstance(node.targets[0], ast.Tuple)
    ]
    assert len(unpacks) == 1
    target = unpacks[0].targets[0]
    assert isinstance(target, ast.Tuple)
    names = [element.id.rstrip("_") for element in target.elts if isinstance(element, ast.Name)]
    assert names == list(columns)
