"""The project's job handlers. Plain functions: a worker runs them in threads, where Django's
ORM works as in any thread (each has its own connection; close it when done, as below)."""

from __future__ import annotations

from typing import Any

from django.db import close_old_connections

from monque_engine import Job


def send_invoice(job: Job) -> dict[str, Any]:
    try:
        number = job.data["number"]
        # ... render the invoice, send it ...
        return {"invoice": number, "sent": True}
    finally:
        close_old_connections()


def register(monque: Any) -> None:
    """``monque``: the worker's ``Monque`` or the views' ``SyncMonque`` (test mode runs them)."""
    monque.register("invoice.send", send_invoice)
