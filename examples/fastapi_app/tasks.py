"""The application's job handlers, registered by one function that every process calls:
the web app (``app.py``, for test mode and a worker beside it) and a worker of its own:

    monque-tui --worker --app examples.fastapi_app.tasks:register sqlite:///jobs.db
"""

from __future__ import annotations

from typing import Any

from monque_engine import Job, Monque, NonRetryableError


async def build_report(job: Job) -> dict[str, Any]:
    """An async handler: its return value is kept as the job's ``result``."""
    rows = job.data.get("rows", [])
    if not isinstance(rows, list):
        raise NonRetryableError("rows must be a list")  # retrying cannot help: fail at once
    return {"count": len(rows), "total": sum(rows)}


def register(monque: Monque) -> None:
    monque.register("report.build", build_report, concurrency=4)
