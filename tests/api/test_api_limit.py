"""``GET /api/v1/jobs?limit=`` read as upstream reads it: JavaScript's ``Number(limit)``, a
whole number of at least 1, at most 100 (``src/surface/request-mapping.ts``). A client
written for upstream that sends ``limit=1e2`` or ``limit=5.0`` got a page there and a 400
here; what upstream refuses stays a 400."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from api_support import ApiClient

from monque_engine import Monque
from monque_engine.management import ManagementApi
from monque_engine.management.jsnumber import js_number, js_whole_number

NAN = math.nan
#: ``Number(text)`` as a JavaScript engine answers it (ECMAScript's StringToNumber).
JS_NUMBERS: list[tuple[str, float]] = [
    ("5", 5),
    ("+5", 5),
    ("-5", -5),
    ("00012", 12),  # not octal: Number() reads decimals
    ("5.0", 5),
    ("5.", 5),
    (".5e1", 5),
    ("1e2", 100),
    ("1E2", 100),
    ("1e+2", 100),
    ("250e-1", 25),
    ("1.5", 1.5),
    ("0x10", 16),
    ("0X1f", 31),
    ("0o17", 15),
    ("0b101", 5),
    (" \t7\n", 7),
    ("\u00a07\u3000", 7),  # JavaScript's whitespace is Unicode's space separators
    ("\ufeff7\u2028", 7),
    ("", 0),
    ("   ", 0),
    ("-0", 0),
    ("1e400", math.inf),
    ("Infinity", math.inf),
    ("-Infinity", -math.inf),
    ("0x" + "f" * 300, math.inf),
    ("+0x10", NAN),  # a sign only before a decimal
    ("-0x10", NAN),
    ("0x", NAN),
    ("0b2", NAN),
    ("1_0", NAN),  # Python's float reads it; JavaScript's Number does not
    ("\uff15", NAN),  # a full-width 5
    ("inf", NAN),
    ("nan", NAN),
    ("NaN", NAN),
    ("infinity", NAN),
    ("1e", NAN),
    ("e2", NAN),
    (".", NAN),
    ("5 5", NAN),
    ("5\x00", NAN),
    ("\u180e5", NAN),  # no longer a space separator
    ("10px", NAN),
]


@pytest.mark.parametrize(("text", "number"), JS_NUMBERS)
def test_js_number_reads_as_javascript_does(text: str, number: float) -> None:
    got = js_number(text)
    assert (math.isnan(got) and math.isnan(number)) or got == number, (text, got)


def test_a_whole_number_is_what_number_is_integer_accepts() -> None:
    assert [js_whole_number(t) for t in ("1e2", "5.0", "0x10", "7", "-3", "1.5", "1e400", "x", "")] == [
        100,
        5,
        16,
        7,
        -3,
        None,
        None,
        None,
        0,
    ]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[ApiClient]:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False) as monque:
        for n in range(5):
            await monque.enqueue("email", {"n": n})
        yield ApiClient(ManagementApi(monque))


@pytest.mark.parametrize(
    ("limit", "jobs"), [("2", 2), ("2.0", 2), ("2e0", 2), ("0x2", 2), ("0b11", 3), (" 4 ", 4), ("1e2", 5), ("+1", 1)]
)
async def test_upstreams_whole_number_forms_give_a_page(client: ApiClient, limit: str, jobs: int) -> None:
    page = await client.ok("GET", "/api/v1/jobs", {"limit": limit})
    assert len(page["jobs"]) == jobs


@pytest.mark.parametrize(
    "limit", ["0", "-1", "1.5", "0.5", "1e400", "Infinity", "NaN", "", " ", "0x", "+0x2", "1_0", "\uff15", "ten"]
)
async def test_what_upstream_refuses_is_400(client: ApiClient, limit: str) -> None:
    answer = await client.call("GET", "/api/v1/jobs", {"limit": limit})
    assert answer.status == 400 and answer.body["error"].startswith("Invalid limit"), answer.body


async def test_our_routes_keep_the_limit_their_document_states(client: ApiClient) -> None:
    """Our own routes' ``limit`` is plain digits (the pattern their OpenAPI document gives)."""
    assert (await client.call("GET", "/api/x/v1/error-groups", {"limit": "10"})).status == 200
    for limit in ("1e2", "5.0", "0x10"):
        answer = await client.call("GET", "/api/x/v1/error-groups", {"limit": limit})
        assert answer.status == 400 and "Invalid limit" in answer.body["error"], answer.body
