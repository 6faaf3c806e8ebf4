"""A Flask application whose views enqueue jobs with ``SyncMonque``: no event loop in the view.

One client per process, built by the app factory and kept in ``app.extensions``. It is safe
from many threads at once (a threaded server, gunicorn's ``--threads``) and across ``fork``
(gunicorn's pre-fork workers: each child opens its own connection on first use).
"""

from __future__ import annotations

import os
from typing import Any

from flask import Flask, abort, current_app, request

from monque_engine import SyncMonque

from . import tasks


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    # As the FastAPI and Django recipes: the environment names the store in a deployment (a
    # relative default would follow gunicorn's working directory).
    app.config["MONQUE_URL"] = os.environ.get("MONQUE_URL", "sqlite:///jobs.db")
    app.config.update(config or {})
    client = SyncMonque(app.config["MONQUE_URL"])
    tasks.register(client)  # run inline in test mode only
    app.extensions["monque"] = client

    @app.post("/signup")
    def signup() -> tuple[dict[str, Any], int]:
        body = request.get_json()
        email = body.get("email") if isinstance(body, dict) else None
        if not isinstance(email, str):
            abort(400, description='send {"email": "..."} as JSON')
        job = _monque().enqueue("email.welcome", {"email": email})
        return {"job": job.id, "status": job.status.value}, 202

    @app.get("/jobs/<job_id>")
    def job_status(job_id: str) -> dict[str, Any]:
        job = _monque().get_job(job_id)
        if job is None:
            abort(404)
        return {"status": job.status.value, "result": job.result, "error": job.fail_reason, "attempts": job.fail_count}

    return app


def _monque() -> SyncMonque:
    client: SyncMonque = current_app.extensions["monque"]
    return client
