"""``monque-tui --serve`` refuses every request without the token, the websocket included.

A real server process on a real socket; requests by aiohttp's client, as a script or an
attacker would send them (the browser's own path is tests/test_serve_browser.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import socket
import subprocess
import sys
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
        assert await _status(f"{base}/login?once={WRONG}") == 401
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


async def _login(base: str) -> str:
    """A session cookie, from the login form with the token (as a person pasting it)."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(base + "/login", data={"token": TOKEN}, allow_redirects=False) as response,
    ):
        assert response.status == 303
        return response.cookies["monque_session"].value


async def test_the_login_link_works_once(store_url: str) -> None:
    with served_console(store_url) as served:
        base, link = served.base_url, served.login_link
        assert TOKEN not in link and link.startswith(base + "/login?once=")
        # unsafe=True: aiohttp's jar keeps no cookies for an IP address otherwise (browsers do).
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(link + "&fontsize=14", allow_redirects=False) as response:
                assert response.status == 303
                assert response.headers["Location"] == "/?fontsize=14"
                cookie = response.headers["Set-Cookie"]
                assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=43200" in cookie
                assert TOKEN not in cookie and link.split("once=")[1] not in cookie
            async with session.get(base + "/") as response:
                assert response.status == 200
                assert response.headers["X-Frame-Options"] == "DENY"
                assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
                page = await response.text()
                assert f"{base}/ws".replace("http:", "ws:") in page and TOKEN not in page
                assert 'action="/logout"' in page  # a way out, on the page
                assert "googleapis" not in page  # nothing loaded from a third party
            async with session.get(link, allow_redirects=False) as response:  # again, logged in: no harm
                assert response.status == 303 and response.headers["Location"] == "/"
        # The same link again (a proxy's access log, a shared screen): refused, and says why.
        async with (
            aiohttp.ClientSession() as session,
            session.get(link, allow_redirects=False, headers={"Accept": "text/html"}) as response,
        ):
            assert response.status == 410 and "monque_session" not in response.cookies
            page = await response.text()
            assert "was used already" in page and "kill -USR1" in page
        # A new link from the operator works once; the old one stays refused.
        fresh = served.new_link()
        assert fresh != link
        assert await _status(fresh) == 303
        assert await _status(fresh) == 410
        assert await _status(link) == 410
        # Scripts: the token itself is not one-time.
        for _ in range(2):
            assert await _status(base + "/", headers={"Authorization": f"Bearer {TOKEN}"}) == 200
        # The token in a URL no longer logs in (proxies log URLs); the form does.
        assert await _status(f"{base}/?token={TOKEN}") == 401
        assert await _login(base)
    assert served.output.count("login from 127.0.0.1 (one-time link)") == 2
    assert served.output.count("a one-time link used before") == 3  # the logged-in browser's is not logged
    assert TOKEN not in served.output


async def test_logout_ends_the_session_and_closes_its_consoles(store_url: str) -> None:
    with served_console(store_url) as served:
        base = served.base_url
        cookie = {"Cookie": f"monque_session={await _login(base)}"}
        assert await _status(base + "/", headers=cookie) == 200
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(base + "/ws", headers={**cookie, "Origin": base}) as websocket,
        ):
            assert (await asyncio.wait_for(websocket.receive(), 30)).type == aiohttp.WSMsgType.BINARY
            async with session.post(base + "/logout", headers=cookie, allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"] == "/login?out=1"
                assert 'monque_session=""' in response.headers["Set-Cookie"]
            while (message := await asyncio.wait_for(websocket.receive(), 30)).type == aiohttp.WSMsgType.BINARY:
                pass
            assert message.type == aiohttp.WSMsgType.CLOSE and message.data == 4001
            assert "logged out" in message.extra
        # The cookie the browser had, sent again (a copy, a stale tab): refused.
        assert await _status(base + "/", headers=cookie) == 401
        assert await _websocket_status(base + "/ws", headers={**cookie, "Origin": base}) == 401
    assert "logout from 127.0.0.1" in served.output


async def test_an_expired_login_is_refused_and_its_console_closed(store_url: str) -> None:
    with served_console(store_url, "--session-lifetime", "3s") as served:
        base = served.base_url
        async with aiohttp.ClientSession() as session:
            for _attempt in range(5):  # a login whose console opens before it expires (a slow machine may need another)
                async with session.get(served.new_link(), allow_redirects=False) as response:
                    assert response.status == 303 and "Max-Age=3;" in response.headers["Set-Cookie"] + ";"
                    value = response.cookies["monque_session"].value
                cookie = {"Cookie": f"monque_session={value}", "Accept": "text/html"}
                try:
                    websocket = await session.ws_connect(base + "/ws", headers={**cookie, "Origin": base})
                except aiohttp.WSServerHandshakeError as error:
                    assert error.status == 401
                    continue
                break
            else:
                pytest.fail("no login lasted long enough to open its console")
            async with websocket:
                while (message := await asyncio.wait_for(websocket.receive(), 30)).type != aiohttp.WSMsgType.CLOSE:
                    pass
            assert message.data == 4002 and "expired" in message.extra
            async with session.get(base + "/", headers=cookie, allow_redirects=False) as response:
                assert response.status == 401
                assert "Your session expired" in await response.text()
    assert "refused GET / from 127.0.0.1: the session expired" in served.output


async def test_a_websocket_from_another_origin_is_refused_even_with_the_cookie(store_url: str) -> None:
    with served_console(store_url) as served:
        cookie = {"Cookie": f"monque_session={await _login(served.base_url)}"}
        status = await _websocket_status(served.base_url + "/ws", headers={**cookie, "Origin": "http://evil.example"})
        assert status == 403
    assert "Origin 'http://evil.example'" in served.output and "session 1 opened" not in served.output


async def test_sessions_beyond_max_sessions_are_refused_with_the_reason(store_url: str) -> None:
    with served_console(store_url, "--max-sessions", "1") as served:
        headers = {"Authorization": f"Bearer {TOKEN}", "Origin": served.base_url}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(served.base_url + "/ws?width=80&height=24", headers=headers) as first,
        ):
            first_bytes = await asyncio.wait_for(first.receive(), 30)  # the console draws: it runs
            assert first_bytes.type == aiohttp.WSMsgType.BINARY
            async with session.ws_connect(served.base_url + "/ws", headers=headers) as second:
                closing = await asyncio.wait_for(second.receive(), 30)
                assert closing.type == aiohttp.WSMsgType.CLOSE and closing.data == 1013  # try again later
                assert "All 1 console sessions are in use (--max-sessions 1)" in closing.extra
        # Once the first page is gone its console process stops, and a new session may start.
        await asyncio.to_thread(_wait_for_line, served, "session 1 closed")
        assert await _websocket_status(served.base_url + "/ws", headers=headers) == 101
    assert "all 1 sessions are in use" in served.output
    assert "session 2 opened" in served.output  # the refused one never started a console


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
        headers = {"Cookie": f"monque_session={await _login(served.base_url)}"}
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


# -- another machine's view: an address it can open, and a warning when that is plain HTTP ----------
def _serve_cli(store_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("MONQUE_")}
    return subprocess.run(
        [sys.executable, "-m", "monque_tui", "--serve", *args, store_url],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environment, "MONQUE_SERVE_TOKEN": TOKEN},
    )


@pytest.mark.parametrize("address", ["0.0.0.0:8080", "[::]:8080", "0:8080"])
def test_every_interface_needs_a_public_url(store_url: str, address: str) -> None:
    done = _serve_cli(store_url, address, "--allow-remote")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "--public-url" in done.stderr and "every interface" in done.stderr


def test_a_public_url_must_name_a_host_browsers_can_open(store_url: str) -> None:
    done = _serve_cli(store_url, "0.0.0.0:8080", "--allow-remote", "--public-url", "http://0.0.0.0:8080")
    assert done.returncode == 2 and "every-interface address" in done.stderr and done.stderr.count("\n") == 1


def _routable_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


async def test_a_specific_address_is_the_link_and_plain_http_is_warned_once(store_url: str) -> None:
    address = _routable_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with served_console(store_url, "--allow-remote", address=f"{address}:0") as served:
        assert served.base_url.startswith(f"http://{address}:")
        link = served.login_link
        assert link.startswith(f"http://{address}:")
        # A request with that Host (another machine's) is served, not redirected to another host.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(link, allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"] == "/"
            async with session.get(served.base_url + "/", allow_redirects=False) as response:
                assert response.status == 200
    warnings = [line for line in served.lines if "plain HTTP" in line]
    assert len(warnings) == 1 and "warning" in warnings[0] and "--public-url https://" in warnings[0]


async def test_loopback_is_not_warned(store_url: str) -> None:
    with served_console(store_url) as served:
        assert served.login_link
    assert "plain HTTP" not in served.output
