"""Every refusal an API client can get is written in the API's language: its field names
(``createdAt``, ``identifier``, ``data[0]``) and JSON's values (``"x"``, ``null``, ``true``,
``["a","b"]``), never the engine's or Python's (``created_at desc``, ``id``, ``None``,
``['a', 'b']``, ``'utf-8' codec``, pydantic's "Input should be a valid list"). A probe of
the API found a cursor error naming the engine's sort fields and status errors printing
Python's ``None``; this sweeps each route's every request field with wrong JSON values."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from api_support import ApiClient

from monque_engine import Monque
from monque_engine.management import ManagementApi
from monque_engine.management.routes import ROUTES

#: What only Python or the engine would write: a Python literal, a single-quoted repr, an
#: engine sort field, pydantic's or a codec's phrasing.
_PYTHON = re.compile(
    r"\bNone\b|\bTrue\b|\bFalse\b|\['|'\]|(?<![\w\"])'[^'\s]*'(?![\w\"])|\\x[0-9a-f]{2}|"
    r"\b(?:created_at|updated_at|next_run_at|error_group|name_pattern|run_at|older_than|newer_than)\w*|"
    r"\bclaimed_at\b|\bdatetime\b|\bid (?:asc|desc)\b|[\x7f-\x9f\u2028\u2029]|"
    r"[Ii]nput should|\bvalid (?:list|dict|int|str)\b|codec|\bNoneType\b|\bdict\b|\bengine\b"
)
#: A wrong value of every JSON kind, and text no field takes.
_WRONG: list[Any] = [None, True, 5, 1.5, [], ["a", None], {}, {"a": 1}, "", " ", "a\x01b", "\ud800", "zz'z", "a\x85"]
#: Instants ISO 8601 writes that no store holds (an offset moves them past the years 1-9999).
_OUT_OF_RANGE = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


def _leaks(message: str) -> list[str]:
    """Python's or the engine's spelling outside the JSON strings the message echoes."""
    return _PYTHON.findall(re.sub(r'"(?:[^"\\]|\\.)*"', '""', message))


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[tuple[ApiClient, str]]:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False) as monque:
        job = await monque.enqueue("email", {"n": 1})
        yield ApiClient(ManagementApi(monque)), job.id


async def test_every_body_field_refused_in_jsons_words(client: tuple[ApiClient, str]) -> None:
    api, job_id = client
    seen = 0
    for route in ROUTES:
        if route.body is None:
            continue
        path = route.path.replace("{id}", job_id)
        for field in route.body.model_fields:
            for value in [*_WRONG, *_OUT_OF_RANGE]:
                answer = await api.call(route.method, path, body={field: value})
                if answer.status == 200:
                    continue
                assert answer.status == 400, (path, field, value, answer.body)
                message = answer.body["error"]
                assert not _leaks(message), (path, field, value, message)
                seen += 1
    assert seen > 100


async def test_every_query_field_refused_in_jsons_words(client: tuple[ApiClient, str]) -> None:
    api, _ = client
    for route in ROUTES:
        if route.query is None:
            continue
        for field in route.query.model_fields:
            for value in ("", " ", "a\x01b", "zz'z", "None", "\ud800", "a\x85", *_OUT_OF_RANGE):
                for pairs in ([(field, value)], [(f"{field}[]", value), (f"{field}[]", "x")]):
                    answer = await api.call("GET", route.path, pairs)
                    if answer.status == 200:
                        continue
                    assert answer.status == 400, (route.path, pairs, answer.body)
                    assert not _leaks(answer.body["error"]), (route.path, pairs, answer.body)


async def test_a_cursor_for_another_sort_names_the_apis_sort_fields(client: tuple[ApiClient, str]) -> None:
    api, _ = client
    await api.api.monque.enqueue("email", {"n": 2})
    cursor = (await api.ok("GET", "/api/v1/jobs", {"limit": "1"}))["cursor"]
    for sort, asked in (
        ({"sortBy": "identifier"}, "sortBy=identifier&sortDirection=desc"),
        ({"sortDirection": "asc"}, "sortBy=createdAt&sortDirection=asc"),
        ({"sortBy": "nextRunAt", "sortDirection": "asc"}, "sortBy=nextRunAt&sortDirection=asc"),
    ):
        answer = await api.call("GET", "/api/v1/jobs", {"cursor": cursor, "limit": "1", **sort})
        assert answer.status == 400
        assert answer.body["error"].startswith(
            f"The cursor was made for sortBy=createdAt&sortDirection=desc, not {asked};"
        ), answer.body
    for damaged in ("zzz", cursor[:-3], "F" + "A" * 12, cursor[0] + cursor[2:]):
        answer = await api.call("GET", "/api/v1/jobs", {"cursor": damaged})
        assert answer.status == 400 and answer.body["error"].startswith("Invalid cursor"), answer.body
        assert not _leaks(answer.body["error"]), answer.body


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"status": None}, "Invalid status null:"),
        ({"status": ["a", "b"]}, 'Invalid status ["a","b"]:'),
        ({"status": True}, "Invalid status true:"),
        ({"name": None}, 'Invalid body field "name": must be a string'),
        ({"name": "a\x01"}, 'name "a\\u0001" holds a control character ("\\u0001")'),
        ({"data": "data.x missing"}, 'Invalid body field "data": must be an array'),
        ({"data": [5]}, 'Invalid body field "data[0]": must be a string'),
    ],
)
async def test_values_are_echoed_as_json_writes_them(
    client: tuple[ApiClient, str], body: dict[str, Any], says: str
) -> None:
    api, _ = client
    answer = await api.call("POST", "/api/x/v1/jobs/actions/cancel/count", body=body)
    assert answer.status == 400 and says in answer.body["error"], answer.body


async def test_a_body_not_utf8_or_not_json_says_so_without_pythons_words(client: tuple[ApiClient, str]) -> None:
    api, _ = client
    for raw, says in ((b"\xff{}", "not UTF-8 (byte 0xff at position 0)"), (b'{"a":', "not JSON")):
        answer = await api.call("POST", "/api/v1/jobs/actions/cancel", raw=raw)
        assert answer.status == 400 and says in answer.body["error"], answer.body
        assert not _leaks(answer.body["error"]), answer.body
    answer = await api.call("POST", "/api/x/v1/queues/actions/pause", body={"name": "a b"})
    assert answer.body["error"].startswith('Invalid job name "a b":'), answer.body
    json.dumps(answer.body)


@pytest.mark.parametrize(
    "term",
    [
        "zzz",
        "data.x ~~ y",
        "data.x =",
        "data.x == a",
        'data.x = "a',
        "data.x = 'a'",
        "data.0 = 1",
        "data.a-b.$c = 1",
        "data.x = [1]",
        "data.x = NaN",
        "data.x = -Infinity",
        'data.x = "a\\u0000"',
        "data." + "a." * 30 + "b = 1",
    ],
)
async def test_a_payload_term_is_refused_in_jsons_words(client: tuple[ApiClient, str], term: str) -> None:
    """The console's filter language reaches API clients too (ADR 0022): its refusals echo
    the term as JSON writes a string, not as Python's repr."""
    api, _ = client
    answer = await api.call("POST", "/api/x/v1/jobs/actions/cancel/count", body={"data": [term]})
    assert answer.status == 400, answer.body
    assert not _leaks(answer.body["error"]), answer.body
