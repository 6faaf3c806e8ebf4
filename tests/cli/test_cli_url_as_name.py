"""A store URL typed where a job name or instance id goes is refused, its password masked (probe 5).

``monque-tui pause mongodb://u:pw@h/db`` (the name forgotten, the URL without ``--url``)
paused a job *named* like the URL, stored it, and printed "paused mongodb://u:pw@…" with
the password. Each command now refuses it with one line saying what goes where, exit 2, and
the store is not touched.
"""

from __future__ import annotations

import asyncio

import pytest
from test_cli_masking import assert_masked, run_cli

from monque_engine import Monque

URL_AS_NAME = "mongodb://admin:pa@ss-w0rd-9f3k@db1:27017/app"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("pause", URL_AS_NAME), "use monque-tui pause NAME --url URL"),
        (("resume", URL_AS_NAME), "use monque-tui resume NAME --url URL"),
        (("release-dead", URL_AS_NAME, "--yes"), "use monque-tui release-dead INSTANCE --url URL"),
        (("export", "--name", URL_AS_NAME), "use monque-tui export --name NAME --url URL"),
    ],
)
def test_a_url_in_place_of_a_name_is_refused(db_url: str, args: tuple[str, ...], expected: str) -> None:
    async def seed() -> None:
        async with Monque(db_url, recover_stale_jobs=False) as monque:
            await monque.enqueue("email.send", {})

    asyncio.run(seed())
    result = run_cli(*args, "--url", db_url)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("monque-tui: error: "), result.stderr
    assert "is a store URL, not a" in result.stderr and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert_masked(result)

    async def paused() -> dict[str, object]:
        async with Monque(db_url, recover_stale_jobs=False) as monque:
            return dict(await monque.paused())

    assert asyncio.run(paused()) == {}
