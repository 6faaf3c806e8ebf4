"""``monque-tui --serve`` refuses every request without the token, the websocket included.

A real server process on a real socket; requests by aiohttp's client, as a script or an
attacker would send them (the browser's own path is tests/test_serve_browser.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # in CI the extra is installed (the test extra has it): never skip there
    pytest.importorskip("textual_serve", reason="the serve extra (pip install 'monque-tui[serve]') is not installed")

import aiohttp

from monque_engine import Monque
from monque_tui.cli.entry import main
from tests.serve_support import TOKEN, served_console

WRONG = "test-token-" + "x" * 30


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'jobs.db'}"


def _cookie(token: str) -> str:
    return hmac.new(token.encode(), b"monque-tui serve session v1", hashlib.sha256).hexdigest()


async def _status(url: str, **kwargs) -> int:  # type: ignore[no-untyped-def]
    async with aiohttp.ClientSession() as session, session.get(url, allow_redirects=False, **kwargs) as response:
        return response.status


async def _websocket_status(url: str, **kwargs) -> int:  # type: ignore[no-untyped-def]
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, **kwargs) as websocket:
                await websocket.close()
                return 101
        except aiohttp.WSServerHandshakeError as error:
            return error.status


async def test_requests_without_the_right_token_are_refused(store_url: str) -> None:
    with served_console(store_url) as served:
        base = served.base_url
        for path in ("/", "/static/js/textual.js", "/static/", "/download/x", "/login/../"):
            assert await _status(base + path) == 401, path
        assert await _status(f"{base}/?token={WRONG}") == 401
        assert await _status(f"{base}/?token=") == 401
        assert await _status(base + "/", headers={"Authorization": f"Bearer {WRONG}"}) == 401
        assert await _status(base + "/", headers={"Cookie": f"monque_session={_cookie(WRONG)}"}) == 401
        # The cookie holds an HMAC of the token, not the token: the token as a cookie is no session.
        assert await _status(base + "/", headers={"Cookie": f"monque_session={TOKEN}"}) == 401
        # Straight to the websocket: no console process is started for it.
        assert await _websocket_status(base + "/ws") == 401
        assert await _websocket_status(f"{base}/ws?token={WRONG}") == 401
        assert await _websocket_status(base + "/ws", headers={"Cookie": f"monque_session={_cookie(WRONG)}"}) == 401
        async with (
            aiohttp.ClientSession() as session,
            session.post(base + "/login", data={"token": WRONG}, allow_redirects=False) as response,
        ):
            assert response.status == 401
            assert "monque_session" not in response.cookies
    assert "session 1 opened" not in served.output
    assert "wrong token" in served.output and "127.0.0.1" in served.output
    assert TOKEN not in served.output and WRONG not in served.output


async def test_the_token_logs_in_once_and_leaves_the_url(store_url: str) -> None:
    with served_console(store_url) as served:
        base = served.base_url
        # unsafe=True: aiohttp's jar keeps no cookies for an IP address otherwise (browsers do).
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(f"{base}/?token={TOKEN}&fontsize=14", allow_redirects=False) as response:
                assert response.status == 303
                assert response.headers["Location"] == "/?fontsize=14"
                cookie = response.headers["Set-Cookie"]
                assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
            async with session.get(base + "/") as response:
                assert response.status == 200
                assert response.headers["X-Frame-Options"] == "DENY"
                assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
                page = await response.text()
                assert f"{base}/ws".replace("http:", "ws:") in page and TOKEN not in page
                assert "googleapis" not in page  # nothing loaded from a third party
        assert await _status(base + "/", headers={"Authorization": f"Bearer {TOKEN}"}) == 200
        async with (
            aiohttp.ClientSession() as session,
            session.post(base + "/login", data={"token": TOKEN}, allow_redirects=False) as response,
        ):
            assert response.status == 303 and "monque_session" in response.cookies
    assert served.output.count("login from 127.0.0.1") == 2
    assert TOKEN not in served.output


async def test_a_websocket_from_another_origin_is_refused_even_with_the_cookie(store_url: str) -> None:
    with served_console(store_url) as served:
        cookie = {"Cookie": f"monque_session={_cookie(TOKEN)}"}
        status = await _websocket_status(served.base_url + "/ws", headers={**cookie, "Origin": "http://evil.example"})
        assert status == 403
    assert "Origin 'http://evil.example'" in served.output and "session 1 opened" not in served.output


async def test_sessions_beyond_max_sessions_are_refused(store_url: str) -> None:
    with served_console(store_url, "--max-sessions", "1") as served:
        headers = {"Cookie": f"monque_session={_cookie(TOKEN)}", "Origin": served.base_url}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(served.base_url + "/ws?width=80&height=24", headers=headers) as first,
        ):
            first_bytes = await asyncio.wait_for(first.receive(), 30)  # the console draws: it runs
            assert first_bytes.type == aiohttp.WSMsgType.BINARY
            assert await _websocket_status(served.base_url + "/ws", headers=headers) == 503
        # Once the first page is gone its console process stops, and a new session may start.
        await asyncio.to_thread(_wait_for_line, served, "session 1 closed")
        assert await _websocket_status(served.base_url + "/ws", headers=headers) == 101
    assert "all 1 sessions are in use" in served.output


def _wait_for_line(served, text: str) -> None:  # type: ignore[no-untyped-def]
    from tests.serve_support import wait_until

    wait_until(lambda: text in served.output, what=repr(text))


# -- the command line: refused before anything is served ----------------------------------------------
def test_another_address_needs_allow_remote(capsys: pytest.CaptureFixture[str], store_url: str) -> None:
    assert main(["--serve", "0.0.0.0:8080", store_url]) == 2
    error = capsys.readouterr().err
    assert "--allow-remote" in error and error.count("\n") == 1


def test_the_token_is_never_a_flag(capsys: pytest.CaptureFixture[str], store_url: str) -> None:
    assert main(["--serve", "8080", "--token", TOKEN, store_url]) == 2
    error = capsys.readouterr().err
    assert "never a flag" in error and TOKEN not in error  # not read as an abbreviated --token-file


def test_a_short_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, store_url: str
) -> None:
    monkeypatch.setenv("MONQUE_SERVE_TOKEN", "short")
    assert main(["--serve", "8080", store_url]) == 2
    assert "at least 16" in capsys.readouterr().err


def test_an_unreadable_token_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_url: str
) -> None:
    assert main(["--serve", "8080", "--token-file", str(tmp_path / "missing"), store_url]) == 2
    error = capsys.readouterr().err
    assert "--token-file" in error and "cannot read the token" in error and error.count("\n") == 1


def test_serve_flags_need_serve(capsys: pytest.CaptureFixture[str], store_url: str) -> None:
    assert main(["--max-sessions", "2", store_url]) == 2
    assert "--max-sessions goes with --serve" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [("8080", "127.0.0.1", 8080), ("localhost:9", "localhost", 9), ("[::1]:80", "::1", 80), ("0", "127.0.0.1", 0)],
)
def test_addresses(text: str, host: str, port: int) -> None:
    from monque_tui.serve.options import parse_address

    address = parse_address(text)
    assert (address.host, address.port, address.is_loopback) == (host, port, True)


@pytest.mark.parametrize("text", ["", "x", "1:2:3", "host:", "70000", "[::1]8080"])
def test_bad_addresses(text: str) -> None:
    from monque_tui.serve.options import parse_address

    with pytest.raises(ValueError):
        parse_address(text)


async def test_a_session_console_gets_the_store_and_read_only_but_never_the_token(store_url: str) -> None:
    """Each session is a console process: its argv shows no URL, its environment holds no token."""
    monque = Monque(store_url)
    await monque.initialize()  # --read-only never creates the file
    await monque.close()
    with served_console(store_url, "--read-only") as served:
        headers = {"Cookie": f"monque_session={_cookie(TOKEN)}"}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(served.base_url + "/ws", headers=headers) as websocket,
        ):
            assert (await asyncio.wait_for(websocket.receive(), 30)).type == aiohttp.WSMsgType.BINARY
            line = next(line for line in served.lines if "session 1 opened" in line)
            pid = int(line.split("console pid ")[1].split()[0])
            environment = dict(
                entry.split("=", 1) for entry in Path(f"/proc/{pid}/environ").read_text().split("\0") if entry
            )
            argv = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    assert environment["MONQUE_URL"] == store_url and environment["MONQUE_READ_ONLY"] == "1"
    assert "MONQUE_SERVE_TOKEN" not in environment and TOKEN not in "".join(environment.values())
    assert store_url not in argv and [word for word in argv if word][-2:] == ["-m", "monque_tui"]
    assert "read-only console" in served.output
