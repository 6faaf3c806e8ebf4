"""The management API inside ``monque-tui --serve`` (issue 39): a real server process on a
real socket and a real SQLite file. Auth is the console's: no token and a wrong one are
401 with the API's error body, ``Authorization: Bearer`` and the login's session cookie
pass; read-only is the server's own: every write is 403 and the file is unchanged."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") != "true":  # in CI the extra is installed (the test extra has it): never skip there
    pytest.importorskip("textual_serve", reason="the serve extra (pip install 'monque-tui[serve]') is not installed")

import aiohttp
from api_support import check_response, write_requests

from monque_engine import Monque
from monque_engine.management import ApiResponse
from tests.serve_support import TOKEN, served_console, wait_until

BEARER = {"Authorization": f"Bearer {TOKEN}"}


async def _seed(url: str) -> list[str]:
    async with Monque(url) as monque:
        return [(await monque.enqueue("email", {"n": n})).id for n in range(3)]


async def _state(url: str) -> list[tuple[Any, ...]]:
    async with Monque(url) as monque:
        jobs = await monque.get_jobs(limit=1000)
        rows: list[tuple[Any, ...]] = sorted(
            (job.id, str(job.status), job.next_run_at_ms, job.updated_at_ms) for job in jobs
        )
        return [*rows, tuple(sorted(await monque.paused()))]


async def _call(
    session: aiohttp.ClientSession, base: str, method: str, path: str, body: Any = None, **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    data = None if body is None else json.dumps(body)
    async with session.request(method, base + path, data=data, allow_redirects=False, **kwargs) as response:
        payload = await response.json(content_type=None)
        assert response.headers["Content-Type"].startswith("application/json")
        if response.status != 401:  # the gate's refusal is not an API route's answer
            check_response(method, path.partition("?")[0], ApiResponse(response.status, payload))
        return response.status, payload


async def test_auth_by_bearer_or_cookie_and_refusals(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    ids = await _seed(url)
    with served_console(url) as served:
        base = served.base_url
        assert "management API at" in served.output and TOKEN not in served.output
        async with aiohttp.ClientSession() as session:
            status, body = await _call(session, base, "GET", "/api/v1/jobs")
            assert status == 401 and "token" in body["error"]
            status, body = await _call(session, base, "GET", "/api/v1/jobs", headers={"Authorization": "Bearer wrong"})
            assert status == 401 and set(body) == {"error"}
            status, body = await _call(session, base, "GET", "/api/v1/jobs", headers=BEARER)
            assert status == 200 and [job["id"] for job in body["jobs"]] == ids[::-1]
            status, body = await _call(session, base, "GET", "/api/v1/health", headers=BEARER)
            assert (status, body["status"]) == (200, "ok")  # the server's own Monque: its store answers
            status, body = await _call(session, base, "POST", f"/api/v1/jobs/{ids[0]}/actions/cancel", headers=BEARER)
            assert (status, body["status"]) == (200, "cancelled")
            status, body = await _call(session, base, "GET", "/api/v1/jobs?x=1", headers=BEARER)
            assert status == 400 and 'Unknown query field "x"' in body["error"]
            status, body = await _call(session, base, "GET", "/api/v1/jobs?status=nope", headers=BEARER)
            assert status == 400 and 'Invalid status "nope"' in body["error"]
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                base + "/api/v1/jobs/actions/delete", data=b'{"name":"' + b"x" * 70_000 + b'"}', headers=BEARER
            ) as response,
        ):
            assert response.status == 400 and "larger than 65536" in (await response.json())["error"]
        async with (  # a browser's login: the form, then its cookie
            aiohttp.ClientSession() as session,
            session.post(base + "/login", data={"token": TOKEN}, allow_redirects=False) as response,
        ):
            cookie = {"Cookie": f"monque_session={response.cookies['monque_session'].value}"}
        async with aiohttp.ClientSession() as session:
            status, body = await _call(session, base, "GET", "/api/v1/jobs/stats", headers=cookie)
            assert (status, body["total"]) == (200, 3)
            status, body = await _call(
                session, base, "POST", f"/api/v1/jobs/{ids[1]}/actions/cancel", headers={**cookie, "Origin": base}
            )
            assert status == 200
            status, body = await _call(
                session,
                base,
                "POST",
                f"/api/v1/jobs/{ids[2]}/actions/cancel",
                headers={**cookie, "Origin": "https://evil.example"},
            )
            assert status == 403 and "served origin" in body["error"]
    assert [row[1] for row in (await _state(url))[:-1]].count("cancelled") == 2


async def test_read_only_server_refuses_every_write_and_keeps_the_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    ids = await _seed(url)
    before = await _state(url)
    with served_console(url, "--read-only") as served:
        base = served.base_url
        async with aiohttp.ClientSession() as session:
            status, caps = await _call(session, base, "GET", "/api/v1/capabilities", headers=BEARER)
            assert status == 200 and caps["readOnly"] is True and not any(list(caps["actions"].values())[1:])
            for method, path, body in write_requests():
                status, answer = await _call(session, base, method, path.replace("{id}", ids[0]), body, headers=BEARER)
                assert (status, answer) == (403, {"error": "Management surface is read-only"}), path
            status, page = await _call(session, base, "GET", "/api/v1/jobs", headers=BEARER)
            assert status == 200 and len(page["jobs"]) == 3
    assert await _state(url) == before


async def test_every_answer_under_api_is_the_apis_json(tmp_path: Path) -> None:
    """A path whose escapes decode to a newline, and ``/api`` itself, are the API's too:
    aiohttp's ``{tail:.*}`` stopped at the newline and answered its own text/plain 404."""
    from yarl import URL

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    ids = await _seed(url)
    with served_console(url) as served:
        async with aiohttp.ClientSession() as session:
            for path, status in (
                ("/api/v1/jobs/%0A", 400),
                (f"/api/v1/jobs/{ids[0]}%0A", 400),
                (f"/api/x/v1/jobs/%0A{ids[0]}/run", 400),
                ("/api", 404),
            ):
                target = URL(served.base_url + path, encoded=True)
                async with session.get(target, headers=BEARER) as response:
                    assert response.status == status, path
                    assert response.headers["Content-Type"].startswith("application/json"), path
                    assert set(await response.json()) == {"error"}, path
            async with session.put(served.base_url + "/api/v1/jobs", headers=BEARER) as response:
                assert (response.status, response.headers.get("Allow")) == (405, "GET, HEAD")


async def test_a_store_deleted_under_the_server_is_named_in_each_answer(tmp_path: Path) -> None:
    """The file deleted while the server runs: health says unavailable, and every other
    answer says the store was lost and to restart (not "internal server error"), with no
    traceback in the server's log for each request."""
    path = tmp_path / "jobs.db"
    url = f"sqlite:///{path}"
    ids = await _seed(url)
    with served_console(url) as served:
        base = served.base_url
        for leftover in tmp_path.glob("jobs.db*"):
            leftover.unlink()
        async with aiohttp.ClientSession() as session:
            status, body = await _call(session, base, "GET", "/api/v1/health", headers=BEARER)
            assert (status, body["status"]) == (200, "unavailable")
            for method, route in (("GET", "/api/v1/jobs"), ("POST", f"/api/v1/jobs/{ids[0]}/actions/cancel")):
                status, body = await _call(session, base, method, route, headers=BEARER)
                assert status == 500 and "restart the server" in body["error"], body
        assert "was deleted while this process had it open" in served.output
        assert "Traceback" not in served.output


async def test_a_client_gone_mid_body_changes_nothing_and_logs_one_line(tmp_path: Path) -> None:
    """A request whose body never arrives (the client disconnects after the headers): the
    job is not cancelled, the server logs one line instead of aiohttp's traceback, and it
    goes on answering."""
    import socket
    from urllib.parse import urlsplit

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    ids = await _seed(url)
    with served_console(url) as served:
        where = urlsplit(served.base_url)
        with socket.create_connection((where.hostname, where.port)) as raw:
            raw.sendall(
                f"POST /api/v1/jobs/{ids[0]}/actions/cancel HTTP/1.1\r\nHost: {where.netloc}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nContent-Length: 1000\r\n\r\n{{}}".encode()
            )
        wait_until(lambda: "went away before its body arrived" in served.output, what="the server's line")
        async with aiohttp.ClientSession() as session:
            status, body = await _call(session, served.base_url, "GET", f"/api/v1/jobs/{ids[0]}", headers=BEARER)
            assert (status, body["status"]) == (200, "pending")
        assert "Traceback" not in served.output


async def test_a_malformed_request_is_one_log_line_not_a_traceback(tmp_path: Path) -> None:
    """aiohttp answers what it cannot parse (a NUL in a header) with a 400 itself and logged
    the parser's traceback: anyone who reaches the port could fill the log with them."""
    import socket
    from urllib.parse import urlsplit

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    await _seed(url)
    with served_console(url) as served:
        where = urlsplit(served.base_url)
        with socket.create_connection((where.hostname, where.port)) as raw:
            raw.sendall(f"GET /api/v1/health HTTP/1.1\r\nHost: {where.netloc}\r\nX-Probe: \x00\r\n\r\n".encode())
            assert raw.recv(100).startswith(b"HTTP/1.0 400")
        with socket.create_connection((where.hostname, where.port)) as raw:  # a request line over 8 KB
            raw.sendall(f"GET /api/v1/jobs?token=sekrit{'x' * 9000} HTTP/1.1\r\nHost: {where.netloc}\r\n\r\n".encode())
            assert raw.recv(100).startswith(b"HTTP/1.0 400")
        wait_until(lambda: "(answered 400): LineTooLong" in served.output, what="the line for the long request")
        wait_until(lambda: "(answered 400): BadHttpMessage" in served.output, what="the one line")
        async with aiohttp.ClientSession() as session:
            status, _ = await _call(session, served.base_url, "GET", "/api/v1/health", headers=BEARER)
            assert status == 200
        assert "Traceback" not in served.output and "sekrit" not in served.output


def _raw_answer(base_url: str, request: bytes) -> tuple[int, str, bytes]:
    """Send ``request`` as bytes on its own connection: status, Content-Type and body."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(base_url)
    with socket.create_connection((where.hostname, where.port)) as raw:
        raw.sendall(request.replace(b"HOST", where.netloc.encode()))
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    kind = next((line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("content-type:")), "")
    return int(lines[0].split()[1]), kind, body


async def test_undecodable_credentials_and_bodies_are_json_4xx_not_500(tmp_path: Path) -> None:
    """Found by probing the served API: a token or session cookie of bytes that are not UTF-8
    was a 500 with a traceback for anyone who reached the port; a body that is not what its
    Content-Encoding says was aiohttp's text/plain 500; ``/api`` without a token was a text 401."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    ids = await _seed(url)
    before = await _state(url)
    with served_console(url) as served:
        close = b"Connection: close\r\n"
        for header in (b"Authorization: Bearer \xff\xfe\r\n", b"Cookie: monque_session=\xff\xfe\r\n"):
            status, kind, body = _raw_answer(
                served.base_url, b"GET /api/v1/jobs HTTP/1.1\r\nHost: HOST\r\n" + close + header + b"\r\n"
            )
            assert (status, kind) == (401, "application/json; charset=utf-8"), body
        for encoding in (b"gzip", b"deflate"):
            status, kind, body = _raw_answer(
                served.base_url,
                f"POST /api/v1/jobs/{ids[0]}/actions/cancel HTTP/1.1\r\nHost: HOST\r\n".encode()
                + close
                + f"Authorization: Bearer {TOKEN}\r\nContent-Encoding: ".encode()
                + encoding
                + b"\r\nContent-Length: 2\r\n\r\n{}",
            )
            assert status == 400, body
            if encoding == b"gzip":  # (aiohttp's parser refuses a bad deflate body itself: 400, one log line)
                assert kind.startswith("application/json") and "Content-Encoding" in json.loads(body)["error"]
        status, kind, body = _raw_answer(served.base_url, b"GET /api HTTP/1.1\r\nHost: HOST\r\n" + close + b"\r\n")
        assert (status, kind) == (401, "application/json; charset=utf-8") and set(json.loads(body)) == {"error"}
        assert "Traceback" not in served.output
    assert await _state(url) == before


async def test_the_api_called_at_another_host_name_says_where_instead_of_redirecting(tmp_path: Path) -> None:
    """Served on 127.0.0.1 and called as localhost, the API answered a text 307 to 127.0.0.1,
    and a client following it dropped the token and got a puzzling 401 (a probe)."""
    from urllib.parse import urlsplit

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    await _seed(url)
    with served_console(url) as served:
        port = urlsplit(served.base_url).port
        status, kind, body = _raw_answer(
            served.base_url,
            f"GET /api/v1/health HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n".encode(),
        )
        assert (status, kind) == (421, "application/json; charset=utf-8"), body
        assert f"This server answers at {served.base_url.rstrip('/')}" in json.loads(body)["error"]
