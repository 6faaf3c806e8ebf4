"""The served console in a real browser: Debian's headless Chromium, driven by Selenium.

The test logs in with the one-time link the server printed, sees a row arrive live (enqueued
here while the page is open), marks a job, cancels it through the confirmation, checks the
store, and logs out with the page's button. Another opens a page past ``--max-sessions`` and
reads why it was refused. The page
draws with xterm.js on a canvas, so the screen's text is read from xterm's own buffer: a
script injected before the page loads keeps a reference to the terminal textual-serve
creates (``this.terminal = new Terminal(...)``).

Without chromium and chromedriver the test is skipped with a warning on a developer's
machine, and FAILS under CI (``CI=true``): .ci/run installs both, so a missing browser
there is a broken CI, never a silent skip.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monque_engine import JobStatus, Monque
from tests.serve_support import TOKEN, served_console, wait_until

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

#: Keeps the terminal textual.js creates, so the test can read the screen as text.
KEEP_TERMINAL = """
window.__monqueTerminals = [];
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  get() { return undefined; },
  set(value) {
    Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer) window.__monqueTerminals.push(value);
  },
});
"""
READ_SCREEN = """
const terminal = window.__monqueTerminals[0];
if (!terminal) return '';
const buffer = terminal.buffer.active, lines = [];
for (let row = 0; row < terminal.rows; row++) {
  const line = buffer.getLine(buffer.viewportY + row);
  lines.push(line ? line.translateToString(true) : '');
}
return lines.join('\\n');
"""


def _browser_or_reason() -> str | None:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not (os.path.exists(path) or shutil.which(path))]
    if missing:
        return f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver"
    try:
        import selenium  # noqa: F401
        import textual_serve  # noqa: F401
    except ImportError as error:
        return f"{error.name} is not installed: pip install -e '.[test]'"
    return None


@pytest.fixture
def browser() -> Iterator[Any]:
    reason = _browser_or_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser test must run in CI, but {reason} (.ci/run installs them)")
        warnings.warn(f"SKIPPING the served console's browser test: {reason}", stacklevel=1)
        pytest.skip(f"BROWSER TEST NOT RUN: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(argument)
    # An explicit driver and browser: Selenium Manager has nothing to look up or download.
    os.environ.setdefault("SE_OFFLINE", "true")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": KEEP_TERMINAL})
        yield driver
    finally:
        driver.quit()


def _enqueue(url: str, name: str) -> str:
    async def run() -> str:
        monque = Monque(url)
        await monque.initialize()
        try:
            return (await monque.enqueue(name)).id
        finally:
            await monque.close()

    return asyncio.run(run())


def _statuses(url: str, *job_ids: str) -> list[JobStatus]:
    async def run() -> list[JobStatus]:
        monque = Monque(url)
        await monque.initialize()
        try:
            jobs = [await monque.get_job(job_id) for job_id in job_ids]
            return [job.status for job in jobs if job is not None]
        finally:
            await monque.close()

    return asyncio.run(run())


def test_a_browser_logs_in_watches_live_rows_and_cancels_a_job(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    first = _enqueue(url, "report.build")
    with served_console(url) as served:
        browser.get(served.login_link)
        assert "once" not in browser.current_url  # the login redirected to a URL without the nonce

        def screen() -> str:
            return str(browser.execute_script(READ_SCREEN))

        wait_until(lambda: "report.build" in screen(), what="the first job on the page")
        live = _enqueue(url, "invoice.send")
        wait_until(lambda: "invoice.send" in screen(), what="the job enqueued while the page is open")

        keys = browser.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea")
        keys.send_keys(" ")
        wait_until(lambda: "1 marked" in screen(), what="the mark")
        keys.send_keys("c")
        wait_until(lambda: "Cancel 1" in screen(), what="the confirmation")
        keys.send_keys("y")
        wait_until(
            lambda: sorted(_statuses(url, first, live)) == sorted([JobStatus.CANCELLED, JobStatus.PENDING]),
            what="one job cancelled in the store",
        )
        wait_until(lambda: "Cancelled 1" in screen(), what="the cancelled count on the page")

        browser.find_element(By.ID, "logout").click()
        wait_until(lambda: "You are logged out" in browser.page_source, what="the logged-out page")
        wait_until(lambda: "session 1 closed" in served.output, what="the console closed by the logout")
        browser.get(served.base_url + "/")
        assert "log in" in browser.page_source  # the cookie no longer opens the console
    assert "session 1 opened for 127.0.0.1" in served.output and "logout from 127.0.0.1" in served.output
    assert TOKEN not in served.output


def test_a_page_past_the_session_limit_says_why(browser: Any, tmp_path: Path) -> None:
    import aiohttp
    from selenium.webdriver.common.by import By

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    _enqueue(url, "report.build")

    async def hold_the_only_session(base: str, opened: threading.Event, release: threading.Event) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}", "Origin": base}
        async with aiohttp.ClientSession() as session, session.ws_connect(base + "/ws", headers=headers) as websocket:
            await websocket.receive()  # the console drew: the session is taken
            opened.set()
            await asyncio.to_thread(release.wait)

    with served_console(url, "--max-sessions", "1") as served:
        opened, release = threading.Event(), threading.Event()
        holder = threading.Thread(
            target=asyncio.run, args=(hold_the_only_session(served.base_url, opened, release),), daemon=True
        )
        holder.start()
        try:
            assert opened.wait(30), "the first session never opened"
            browser.get(served.login_link)
            message = wait_until(
                lambda: (
                    "-closed" in (browser.find_element(By.TAG_NAME, "body").get_attribute("class") or "")
                    and browser.find_element(By.CSS_SELECTOR, ".closed-dialog .message").text
                ),
                what="the page's closed dialog",
            )
        finally:
            release.set()
            holder.join(30)
    assert "All 1 console sessions are in use (--max-sessions 1)" in message
    assert "Close one, then Restart" in message
