"""The Flask recipe under Flask's own test client, in test mode (the ``monque_test_mode``
fixture of the ``monque`` pytest plugin), on a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from .app import create_app


@pytest.fixture
def client(monque_test_mode: None, monque_test_url: str) -> Iterator[FlaskClient]:
    app = create_app({"MONQUE_URL": monque_test_url, "TESTING": True})
    yield app.test_client()
    app.extensions["monque"].close()


def test_signup_runs_the_welcome_job_inline(client: FlaskClient) -> None:
    answer = client.post("/signup", json={"email": "ada@example.com"})
    assert answer.status_code == 202 and answer.json["status"] == "completed"
    job = client.get(f"/jobs/{answer.json['job']}").json
    assert job == {"status": "completed", "result": {"sent_to": "ada@example.com"}, "error": None, "attempts": 0}


def test_a_failing_job_is_retried_then_failed_as_a_worker_would(client: FlaskClient) -> None:
    answer = client.post("/signup", json={"email": "nobody"})
    assert answer.json["status"] == "failed"
    job = client.get(f"/jobs/{answer.json['job']}").json
    assert job["attempts"] == 3 and job["error"] == "not an e-mail address: 'nobody'"  # max_retries=3


def test_a_signup_without_an_email_is_the_clients_error_and_enqueues_nothing(client: FlaskClient) -> None:
    for body in ({}, {"email": 5}, ["ada@example.com"]):
        assert client.post("/signup", json=body).status_code == 400, body
    assert client.application.extensions["monque"].count_jobs() == 0
