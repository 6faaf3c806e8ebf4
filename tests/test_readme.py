"""The README's and the guide pages' examples run as written.

The README's tour (blocks whose first line is ``# <file>.py``) is written to a temporary
directory and run exactly as a reader would: enqueue, then a real worker process until
every due job is done. Every ``monque-tui`` command line documented in README.md or
docs/*.md must be accepted by the real parser, and ``--help`` / ``--version`` run for real;
every other Python block there must at least compile.
"""

from __future__ import annotations

import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from monque_tui.cli.parser import parse

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
#: Every page a reader is sent to: the README, then the guides under docs/.
PAGES = {"README.md": README} | {f"docs/{path.name}": path.read_text() for path in sorted((ROOT / "docs").glob("*.md"))}
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
SHELL = ("sh", "bash")


def blocks(language: str | tuple[str, ...], text: str = README) -> list[str]:
    languages = (language,) if isinstance(language, str) else language
    return [body for lang, body in BLOCK.findall(text) if lang in languages]


def tour_files() -> dict[str, str]:
    files = {}
    for body in blocks("python"):
        first = body.splitlines()[0]
        if re.fullmatch(r"# [\w.]+\.py", first):
            files[first[2:]] = body
    return files


def documented_commands() -> list[list[str]]:
    commands = []
    for body in (body for text in PAGES.values() for body in blocks(SHELL, text)):
        for line in body.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "monque-tui":
                commands.append(words[1:])
    return commands


def test_the_readme_documents_the_two_commands_first() -> None:
    first_block = blocks("sh")[0]
    assert "make demo" in first_block and "make test" in first_block


def test_every_documented_command_line_is_accepted_by_the_parser() -> None:
    commands = documented_commands()
    assert len(commands) >= 8, "the README's command examples were not found"
    for argv in commands:
        try:
            parse(argv)  # the one parser: the console's form and every command
        except SystemExit as error:  # --help / --version exit 0 by design
            assert error.code == 0, f"README command rejected: monque-tui {' '.join(argv)}"


def test_help_and_version_run_and_name_every_documented_flag() -> None:
    script = Path(sys.executable).parent / "monque-tui"
    help_text = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert "monque-tui" in version
    flags = {word.split("=")[0] for argv in documented_commands() for word in argv if word.startswith("--")}
    missing = sorted(flag for flag in flags if flag not in help_text)
    assert not missing, f"--help does not mention {missing}"


def _count(db: Path, status: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM monque_jobs WHERE status = ?", (status,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def test_the_five_minute_tour_runs_as_written(tmp_path: Path) -> None:
    files = tour_files()
    assert {"tasks.py", "enqueue.py"} <= set(files), "the tour's tasks.py / enqueue.py blocks were not found"
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    subprocess.run([sys.executable, "enqueue.py"], cwd=tmp_path, check=True, timeout=60)
    db = tmp_path / "jobs.db"
    assert _count(db, "pending") == 104  # 1 now + 1 in ten minutes + 100 + 1 that will fail + 1 weekly

    worker_line = next(argv for argv in documented_commands() if argv[:1] == ["--worker"] and "tasks:setup" in argv)
    script = Path(sys.executable).parent / "monque-tui"
    worker = subprocess.Popen(
        [str(script), *worker_line], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while (
            (_count(db, "completed") < 101 or _count(db, "failed") < 1)
            and time.monotonic() < deadline
            and worker.poll() is None
        ):
            time.sleep(0.05)  # polling an external process's file: there is no event to await
        assert _count(db, "completed") == 101, "the worker did not complete the 101 due jobs"
        assert _count(db, "failed") == 1, "the bounce job did not fail after its two attempts"
        worker.send_signal(signal.SIGINT)
        output, _ = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
    assert worker.returncode == 0, output
    assert "sending welcome to ada@example.com" in output
    assert _count(db, "pending") == 2  # the delayed job and the weekly schedule wait their turn


FRAGMENTS = [
    pytest.param(page, block, id=f"{page}-{number}")
    for page, text in PAGES.items()
    for number, block in enumerate(blocks("python", text))
    if not (page == "README.md" and re.match(r"# [\w.]+\.py\n", block))
]


def test_the_guide_pages_are_scanned() -> None:
    """A page moved or renamed must not silently take its examples out of these tests."""
    pages_with_fragments = {param.values[0] for param in FRAGMENTS}
    assert {"docs/engine.md", "docs/operations.md"} <= pages_with_fragments


@pytest.mark.parametrize(("page", "block"), FRAGMENTS)
def test_api_fragments_compile(page: str, block: str) -> None:
    """Fragments with top-level await cannot run alone; they must at least be valid Python."""
    wrapped = "async def _example():\n" + "".join(f"    {line}\n" for line in block.splitlines())
    compile(wrapped, page, "exec")
