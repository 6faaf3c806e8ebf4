"""A FastAPI application that enqueues jobs (run it with ``uvicorn examples.fastapi_app.app:app``; uvicorn is
not among monque-tui's extras: ``pip install uvicorn``).

The lifespan opens one ``Monque`` for the process and closes it at shutdown; routes reach
it through ``request.app.state``. With ``MONQUE_RUN_WORKER=1`` the same process also runs
the handlers (a worker beside the app, on its event loop); without it a separate process
runs them: ``monque-tui --worker --app examples.fastapi_app.tasks:register URL``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request

from monque_engine import JobNotFoundError, Monque, WaitTimeoutError

from . import tasks

#: The longest ``?wait=`` a request may ask for, in seconds.
MAX_WAIT = 60.0


def create_app(url: str | None = None, run_worker: bool | None = None) -> FastAPI:
    store_url = url or os.environ.get("MONQUE_URL", "sqlite:///jobs.db")
    beside = run_worker if run_worker is not None else os.environ.get("MONQUE_RUN_WORKER") == "1"

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with Monque(store_url) as monque:  # initialize() now, close() at shutdown
            tasks.register(monque)  # test mode runs them inline; a worker beside the app runs them
            if beside:
                await monque.start()
            app.state.monque = monque
            yield

    app = FastAPI(lifespan=lifespan)

    @app.post("/reports", status_code=202)
    async def create_report(request: Request, body: dict[str, Any]) -> dict[str, Any]:
        job = await request.app.state.monque.enqueue("report.build", {"rows": body.get("rows", [])})
        return {"id": job.id, "status": job.status.value, "result": job.result}

    @app.get("/reports/{job_id}")
    async def report(
        request: Request,
        job_id: str,
        # Checked here (422 for 0, -1, nan, inf, a day): a request holds its worker while it waits.
        wait: float | None = Query(None, gt=0, le=MAX_WAIT),
    ) -> dict[str, Any]:
        monque: Monque = request.app.state.monque
        try:
            job = await monque.wait(job_id, timeout=wait) if wait else await monque.get_job(job_id)
        except JobNotFoundError:
            job = None
        except WaitTimeoutError as error:
            job = error.job
        if job is None:
            raise HTTPException(404, f"no report job {job_id}")
        return {"id": job.id, "status": job.status.value, "result": job.result, "error": job.fail_reason}

    return app


app = create_app()
