"""The FastAPI recipe under its own test client (Starlette's ``TestClient``, which runs the
lifespan), on a real SQLite file: in test mode the route's job has run when it answers; with
the worker beside the app, ``?wait=`` returns the job once the worker finished it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from .app import create_app


def test_in_test_mode_the_job_has_run_when_the_route_answers(monque_test_mode, monque_test_url):
    with TestClient(create_app(monque_test_url)) as client:
        created = client.post("/reports", json={"rows": [1, 2, 3]}).json()
        assert created["status"] == "completed" and created["result"] == {"count": 3, "total": 6}
        assert client.get(f"/reports/{created['id']}").json()["result"] == {"count": 3, "total": 6}
        failed = client.post("/reports", json={"rows": "oops"}).json()
        assert failed["status"] == "failed"
        assert client.get(f"/reports/{failed['id']}").json()["error"] == "rows must be a list"
        assert client.get(f"/reports/{'0' * 24}").status_code == 404


def test_a_bad_wait_is_the_clients_error_not_a_server_error(monque_test_mode, monque_test_url):
    with TestClient(create_app(monque_test_url), raise_server_exceptions=False) as client:
        created = client.post("/reports", json={"rows": [1]}).json()
        for wait in ("-1", "0", "nan", "inf", "86400", "soon"):
            assert client.get(f"/reports/{created['id']}", params={"wait": wait}).status_code == 422, wait


def test_a_worker_beside_the_app_runs_the_job_and_wait_returns_it(monque_test_url):
    with TestClient(create_app(monque_test_url, run_worker=True)) as client:
        created = client.post("/reports", json={"rows": [5, 5]}).json()
        assert created["status"] == "pending"  # no test mode: the worker runs it
        done = client.get(f"/reports/{created['id']}", params={"wait": 30}).json()
        assert done == {"id": created["id"], "status": "completed", "result": {"count": 2, "total": 10}, "error": None}


def test_a_worker_process_of_its_own_runs_the_job(monque_test_url):
    """``monque-tui --worker --app examples.fastapi_app.tasks:register``: a real process."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    with TestClient(create_app(monque_test_url)) as client:
        created = client.post("/reports", json={"rows": [7]}).json()
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "monque_tui",
                "--worker",
                "--app",
                "examples.fastapi_app.tasks:register",
                monque_test_url,
            ],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            done = client.get(f"/reports/{created['id']}", params={"wait": 60}).json()
            assert done["status"] == "completed" and done["result"] == {"count": 1, "total": 7}
        finally:
            worker.send_signal(signal.SIGTERM)
            _, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err.decode()
