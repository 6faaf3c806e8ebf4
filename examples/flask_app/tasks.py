"""The application's job handlers (plain functions: a worker runs them in threads).

One ``register`` for every process: the web app registers them on its ``SyncMonque`` (run
only in test mode: a SyncMonque runs no worker), and the worker process runs them:

    monque-tui --worker --app examples.flask_app.tasks:register sqlite:///jobs.db
"""

from __future__ import annotations

from typing import Any

from monque_engine import Job


def send_welcome(job: Job) -> dict[str, Any]:
    address = job.data["email"]
    if "@" not in address:
        raise ValueError(f"not an e-mail address: {address!r}")
    return {"sent_to": address}


def register(monque: Any) -> None:
    """``monque``: a ``Monque`` (the worker) or a ``SyncMonque`` (the web app)."""
    monque.register("email.welcome", send_welcome, max_retries=3)
