"""A password never prints: the real CLI, as a subprocess, on every path that echoes a URL.

Each case runs ``python -m monque_tui`` and asserts that no fragment of the password is on
stdout or stderr. Passwords contain an ``@`` on purpose: an unescaped ``@`` used to leave
the part after it in plain sight.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_helpers import CLI_DIR

SECRET = "pa@ss-w0rd-9f3k"
FRAGMENTS = ("pa@ss", "ss-w0rd-9f3k", "w0rd")


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "monque_tui", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=str(CLI_DIR),
        stdin=subprocess.DEVNULL,
    )


def assert_masked(result: subprocess.CompletedProcess[str]) -> None:
    for stream in (result.stdout, result.stderr):
        for fragment in FRAGMENTS:
            assert fragment not in stream, f"{fragment!r} leaked:\n{stream}"


@pytest.mark.parametrize(
    "url",
    [
        f"mongodb:/alice:{SECRET}@127.0.0.1:9/app",  # one slash
        f"mongodb//alice:{SECRET}@127.0.0.1:9/app",  # no colon
        f" mongodb://alice:{SECRET}@127.0.0.1:9/app",  # a leading space
        f"mongodb://alice:{SECRET}@127.0.0.1:9/app",  # well-formed, unreachable
        f"mongodb+srv://alice:{SECRET}@db1.example.invalid,db2.example.invalid/app",  # srv with several hosts
        f"alice:{SECRET}@127.0.0.1:9/app",  # no scheme at all
    ],
)
def test_url_errors_never_show_the_password(url: str) -> None:
    result = run_cli("--connect-timeout", "0.3", url)
    assert result.returncode in (2, 3), result.stderr
    assert result.stderr.startswith("monque-tui: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert_masked(result)


def test_url_from_the_environment_is_masked_too() -> None:
    result = run_cli(env={"MONQUE_URL": f"mongodb:/alice:{SECRET}@127.0.0.1:9/app"})
    assert result.returncode == 2
    assert_masked(result)


def test_instance_app_conflict_masks_the_url_given_on_the_command_line(db_url: str) -> None:
    result = run_cli(
        "--worker",
        "--app",
        "apps.instance_app:monque",
        f"mongodb://alice:{SECRET}@db1/app",
        env={"TEST_APP_URL": db_url},
    )
    assert result.returncode == 2, result.stderr
    assert "is a Monque instance bound to" in result.stderr
    assert_masked(result)


def test_an_import_error_quoting_a_url_is_masked() -> None:
    result = run_cli("--worker", "--app", "apps.leaky_import_app:setup", env={"TEST_SECRET": SECRET})
    assert result.returncode == 4, result.stderr
    assert "alice:***@db1/app" in result.stderr
    assert_masked(result)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_log_lines_and_tracebacks_are_masked(fmt: str, db_url: str) -> None:
    result = run_cli(
        "--worker",
        "--app",
        "apps.leaky_app:setup",
        "--log-format",
        fmt,
        "--duration",
        "0.2",
        "--summary-interval",
        "0",
        db_url,
        env={"TEST_SECRET": SECRET, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "alice:***@db1:27017,db2:27017/app" in result.stderr
    assert "RuntimeError: cannot reach mongodb://alice:***@" in result.stderr  # the traceback, masked
    assert_masked(result)
    if fmt == "json":
        lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
        assert any(line.get("logger") == "leaky_app" for line in lines)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_workers_start_line_for_an_instance_app_is_masked(fmt: str, db_url: str) -> None:
    result = run_cli(
        "--worker",
        "--app",
        "apps.credential_store_app:monque",
        "--log-format",
        fmt,
        "--duration",
        "0.2",
        "--summary-interval",
        "0",
        env={"TEST_APP_URL": db_url, "TEST_SECRET": SECRET, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "started on mongodb://alice:***@db1:27017,db2:27017/app" in result.stderr
    assert_masked(result)


def test_an_srv_host_dns_does_not_know_is_unreachable_not_invalid() -> None:
    """``mongodb+srv://…@nohost.invalid`` read "Invalid MongoDB URL", exit 2: PyMongo's SRV
    lookup fails while the client is built, as a ConfigurationError. The same host in a
    ``mongodb://`` URL is "Cannot reach MongoDB", exit 3, as the exit-code table says of an
    unreachable server (a docs probe). Real DNS: ``.invalid`` never resolves (RFC 2606)."""
    password = "plainsekrit4711"  # nothing to escape: the DNS lookup is what must fail
    result = run_cli("paused", "--connect-timeout", "1", f"mongodb+srv://alice:{password}@nohost.invalid/app")
    assert result.returncode == 3, result.stderr
    assert "Cannot reach MongoDB" in result.stderr and "SRV record" in result.stderr, result.stderr
    assert password not in result.stderr + result.stdout
