"""Dates of the year 1 keep four digits: ``--created 0001-01-01..`` was echoed back as
"created 1-01-01.. UTC" (the C library's ``%Y`` does not pad; a CLI probe)."""

from __future__ import annotations

import asyncio

from monque_engine import Monque
from monque_tui.cli.entry import main
from monque_tui.console.formatting import absolute


def test_a_range_from_the_year_one_reads_with_four_digits(tmp_path: object, capsys: object) -> None:
    url = f"sqlite:///{tmp_path}/jobs.db"

    async def make() -> None:  # a store to count on
        async with Monque(url) as monque:
            await monque.enqueue("email")

    asyncio.run(make())
    assert main(["delete", "--created", "0001-01-01..", url]) == 0
    assert "created 0001-01-01.. UTC" in capsys.readouterr().err  # type: ignore[attr-defined]


def test_an_instant_of_the_year_one_reads_with_four_digits() -> None:
    assert absolute(-62_135_596_800_000).startswith("0001-01-01 00:00:00.000")
