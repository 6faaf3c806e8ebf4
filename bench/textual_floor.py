"""The framework's floor for ``bench.console_launch``: the least a Textual app can do to show
the same first page, so the console's launch can be read against it in the same run.

``python bench/textual_floor.py sqlite:////path/to/store.db``: plain ``sqlite3`` (no engine),
the newest 45 jobs of the store's table by ``created_at``, in one Textual ``DataTable`` with a
``Header`` and a ``Footer``, columns id / name / status / created. No store layer, no feed,
no other screen: whatever the console takes beyond this is its own.
"""

from __future__ import annotations

import sqlite3
import sys
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.widgets import DataTable, Footer, Header

ROWS = 45
QUERY = "SELECT id, name, status, created_at FROM monque_jobs ORDER BY created_at DESC, id DESC LIMIT ?"


class Floor(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("q", "quit", "Quit")]

    def __init__(self, path: str) -> None:
        super().__init__()
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            self.rows = connection.execute(QUERY, (ROWS,)).fetchall()
        finally:
            connection.close()

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable()
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("ID", "NAME", "STATUS", "CREATED")
        table.add_rows(
            [(job_id[-8:], name, f" {status} ", str(created)) for job_id, name, status, created in self.rows]
        )


if __name__ == "__main__":
    url = sys.argv[1]
    if not url.startswith("sqlite:///"):
        raise SystemExit("usage: textual_floor.py sqlite:////path/to/store.db")
    Floor(url.removeprefix("sqlite:///")).run()
