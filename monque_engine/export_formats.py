"""The export formats, apart from the exporter: the command line offers them as choices on
every start (``monque-tui --help``), and ``export`` itself imports ``csv``, ``uuid`` (and with
it ``platform``) and the attempts; a console's launch needs none of them (issue 40)."""

from __future__ import annotations

from typing import Literal

ExportFormat = Literal["jsonl", "csv"]
FORMATS: tuple[str, ...] = ("jsonl", "csv")
