"""Fuzz the served management API against its own OpenAPI document with schemathesis.

A probe, not a test: schemathesis is not a dependency of the project (install it into your
own venv: ``pip install schemathesis``), and ``make test`` never runs this. It starts
``monque-tui --serve`` as a user does (a real subprocess, the token in its environment) on
a fresh SQLite file seeded with ``--jobs`` jobs, fetches the document the server serves
(``/api/x/v1/openapi.json``), or takes ``--document`` (upstream's ``openapi.json``), and runs
``schemathesis run`` against it with every check. Afterwards it reads what the server
logged: a traceback there is a fault even when every answer looked right.

    python -m bench.api_fuzz --max-time 120                    # reads only
    python -m bench.api_fuzz --writes --max-time 300           # every route: the store is scratch
    python -m bench.api_fuzz --document ../shared/upstream-management/openapi.json

Exit status: schemathesis's (0: no failure), or 1 when the server logged a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

_SERVING = re.compile(r" on (http://\S+?)/?$")


async def _seed(url: str, jobs: int) -> None:
    from monque_engine import Monque

    async with Monque(url) as monque:
        names = ("email", "report", "send-email", "billing")
        made = await monque.enqueue_many(
            [
                {"name": names[n % 4], "data": {"n": n, "customer_id": n % 17, "nested": {"k": "v" * (n % 5)}}}
                for n in range(jobs)
            ]
        )
        for job in made[: jobs // 10]:
            await monque.cancel_job(job.id)


def _start(url: str, token: str, lines: list[str]) -> tuple[subprocess.Popen[str], str]:
    """The server, and its URL once it serves; a thread keeps reading what it prints into
    ``lines`` (a full pipe would block its logging, and so its answers)."""
    environment = {**os.environ, "MONQUE_SERVE_TOKEN": token, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "monque_tui", "--serve", "127.0.0.1:0", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=environment,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", file=sys.stderr)
        lines.append(line)
        match = _SERVING.search(line.rstrip("\n"))
        if match:
            threading.Thread(target=lines.extend, args=(process.stdout,), daemon=True).start()
            return process, match.group(1)
    raise SystemExit(f"the server exited before serving ({process.wait()})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.api_fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=3000, help="jobs seeded into the scratch store (3000)")
    parser.add_argument("--max-time", type=int, default=120, help="schemathesis's time budget in seconds (120)")
    parser.add_argument("--writes", action="store_true", help="fuzz the write routes too (bulk deletes included)")
    parser.add_argument("--document", type=Path, help="an OpenAPI document to fuzz by (default: the server's own)")
    args = parser.parse_args(argv)
    schemathesis = shutil.which("schemathesis") or shutil.which("st")
    if schemathesis is None:
        print("schemathesis is not installed: pip install schemathesis (in your own venv)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="monque-api-fuzz-") as scratch:
        url = f"sqlite:///{scratch}/jobs.db"
        asyncio.run(_seed(url, args.jobs))
        token = secrets.token_urlsafe(24)
        lines: list[str] = []
        process, base = _start(url, token, lines)
        try:
            document = args.document
            if document is None:
                request = urllib.request.Request(
                    base + "/api/x/v1/openapi.json", headers={"Authorization": f"Bearer {token}"}
                )
                with urllib.request.urlopen(request, timeout=30) as response:
                    document = Path(scratch) / "openapi.json"
                    document.write_text(json.dumps(json.load(response)))
            command = [
                schemathesis,
                "run",
                str(document.resolve()),
                "--url",
                base,
                "-H",
                f"Authorization: Bearer {token}",
                "--checks",
                "all",
                "--max-time",
                str(args.max_time),
                "--continue-on-failure",
            ]
            if not args.writes:
                command += ["--include-method", "GET"]
            verdict = subprocess.run(command, check=False, cwd=scratch).returncode  # its cache: scratch
        finally:
            process.terminate()
            process.wait(timeout=30)
    output = "".join(lines)
    if "Traceback" in output:
        print(output, file=sys.stderr)
        print("api_fuzz: the server logged a traceback (above)", file=sys.stderr)
        return 1
    return verdict


if __name__ == "__main__":
    raise SystemExit(main())
