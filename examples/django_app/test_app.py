"""The Django recipe: a view under Django's test client in test mode, and the
``monque_worker`` management command as a real process, stopped by SIGTERM.

Django is set up once per test process with the recipe's settings (it holds no database,
and sets up in well under a second, so the recipe runs in the normal ``make test``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import django
import pytest
from django.test import Client, override_settings

from monque_engine import JobStatus, SyncMonque

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_app.mysite.settings")
django.setup()

MANAGE = Path(__file__).resolve().parent / "manage.py"


def test_the_view_enqueues_and_test_mode_runs_the_job(monque_test_mode, monque_test_url):
    with override_settings(MONQUE_URL=monque_test_url):
        client = Client()
        answer = client.post("/invoices/7/send")
        assert answer.status_code == 202 and answer.json()["status"] == "completed"
        job = client.get(f"/jobs/{answer.json()['job']}").json()
        assert job == {"status": "completed", "result": {"invoice": 7, "sent": True}}
        assert client.get(f"/jobs/{'0' * 24}").status_code == 404


def test_the_management_command_runs_the_worker_until_sigterm(monque_test_url):
    producer = SyncMonque(monque_test_url)
    try:
        job = producer.enqueue("invoice.send", {"number": 8})
        worker = subprocess.Popen(
            [sys.executable, str(MANAGE), "monque_worker"],
            env={**os.environ, "MONQUE_URL": monque_test_url},  # manage.py names the settings
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            done = producer.wait(job.id, timeout=60)
        finally:
            worker.send_signal(signal.SIGTERM)
            out, err = worker.communicate(timeout=60)
        assert done.status is JobStatus.COMPLETED and done.result == {"invoice": 8, "sent": True}
        assert worker.returncode == 0, err.decode()
        assert b"monque worker running invoice.send" in out
    finally:
        producer.close()


@pytest.mark.parametrize(
    ("url", "code", "words"),
    [
        ("sqlite:////nonexistent-dir/jobs.db", 3, "directory /nonexistent-dir does not exist"),
        ("mongodb://app:s3cret@127.0.0.1:1/db?serverSelectionTimeoutMS=200", 3, "Cannot reach MongoDB"),
        ("bogus://x", 2, "Unknown store URL scheme"),
    ],
)
def test_the_management_command_reports_a_bad_store_in_one_line(url, code, words):
    worker = subprocess.run(
        [sys.executable, str(MANAGE), "monque_worker"],
        env={**os.environ, "MONQUE_URL": url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert worker.returncode == code, worker.stderr
    assert words in worker.stderr and "Traceback" not in worker.stderr, worker.stderr
    assert "s3cret" not in worker.stderr


@pytest.fixture(autouse=True)
def _no_leftover_clients():
    yield
    from examples.django_app.jobs import queue

    for client in queue._clients.values():
        client.close()
    queue._clients.clear()
