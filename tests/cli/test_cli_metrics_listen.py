"""``--metrics`` beyond loopback needs ``--allow-remote``, as ``--serve`` does; name sets are checked.

Real ``monque-tui --worker`` processes: a refused setting exits 2 with one line before the
store or the app is opened; an allowed one serves, and ``--metrics-max-names`` bounds the
series of the names it sees (issue 34, part 6).
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable

import pytest
from cli_helpers import CliProcess, wait_until
from prometheus_client.parser import text_string_to_metric_families

APP = "apps.metrics_app:monque"


def refused(process: CliProcess) -> str:
    assert process.wait_exit() == 2
    lines = [line for line in process.lines if line.strip()]
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "192.0.2.7:0"])
def test_a_metrics_address_beyond_loopback_needs_allow_remote(
    spawn: Callable[..., CliProcess], db_url: str, address: str
) -> None:
    process = spawn("--worker", "--app", APP, "--metrics", address, env={"TEST_APP_URL": db_url})
    line = refused(process)
    assert "--metrics" in line and "other machines" in line and "--allow-remote" in line


def test_the_environment_is_refused_the_same_and_names_itself(spawn: Callable[..., CliProcess], db_url: str) -> None:
    process = spawn("--worker", "--app", APP, env={"TEST_APP_URL": db_url, "MONQUE_METRICS": "0.0.0.0:0"})
    line = refused(process)
    assert "MONQUE_METRICS 0.0.0.0:0" in line and "MONQUE_ALLOW_REMOTE=1" in line


def test_allow_remote_serves_every_interface(spawn: Callable[..., CliProcess], db_url: str) -> None:
    process = spawn(
        "--worker",
        "--app",
        APP,
        "--metrics",
        "0.0.0.0:0",
        "--allow-remote",
        "--metrics-max-names",
        "1",
        "--log-format",
        "json",
        "--summary-interval",
        "0",
        env={"TEST_APP_URL": db_url},
    )
    serving = process.wait_for_event("metrics:serving")
    process.wait_for_event("worker:started")

    def names() -> set[str]:
        with urllib.request.urlopen(f"http://127.0.0.1:{serving['port']}/metrics", timeout=10) as response:
            text = response.read().decode()
        return {
            sample.labels["name"]
            for family in text_string_to_metric_families(text)
            if family.name == "monque_queue_consumers"
            for sample in family.samples
        }

    # Three registered names, one series of its own: the first seen, and "other" for the rest.
    got = wait_until(lambda: (n := names()) and n, what="a scrape with the consumers gauge")
    assert len(got) == 2 and "other" in got


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--allow-remote"], "--allow-remote goes with --serve [HOST:]PORT or --metrics HOST:PORT"),
        (["--metrics-max-names", "5"], "--metrics-max-names goes with --metrics"),
        (["--metrics", "0", "--metrics-names", "a,,b"], "--metrics-names"),
        (["--metrics", "0", "--metrics-names", "a", "--metrics-max-names", "3"], "give one"),
        (["--metrics", "0", "--metrics-max-names", "-1"], "0 or more"),
    ],
)
def test_metrics_settings_that_make_no_sense_are_refused(
    spawn: Callable[..., CliProcess], db_url: str, args: list[str], message: str
) -> None:
    process = spawn("--worker", "--app", APP, *args, env={"TEST_APP_URL": db_url})
    assert message in refused(process)


@pytest.mark.parametrize("mode", [[], ["--demo"]])
def test_allow_remote_with_nothing_to_listen_is_refused(
    spawn: Callable[..., CliProcess], db_url: str, mode: list[str]
) -> None:
    process = spawn(*mode, "--allow-remote", db_url)
    assert "--allow-remote goes with --serve" in refused(process)
