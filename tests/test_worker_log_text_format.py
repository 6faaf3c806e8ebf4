"""The worker's text log lines: ``HH:MM:SS LEVEL    message``, coloured only on a terminal.

They were rendered by Rich's ``RichHandler`` at ~155 µs a line, and the worker logs a line
per completed job: a worker draining no-op jobs at the default log level ran at ~5,000
jobs/s. The layout is the one Rich printed off a terminal, so tools that read it keep
working."""

from __future__ import annotations

import io
import logging
import re
import sys

import pytest

from monque_tui.worker.logging_setup import TextLineFormatter, configure_logging, wants_colour

LINE = re.compile(r"^\d\d:\d\d:\d\d (INFO|WARNING|ERROR|DEBUG) +(.*)$")


def _record(level: int, message: str, *args: object, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            exc_info = sys.exc_info()
    return logging.LogRecord("monque_tui.worker", level, __file__, 1, message, args, exc_info)


def test_a_line_is_time_level_padded_to_eight_and_the_message() -> None:
    line = TextLineFormatter(colour=False).format(_record(logging.INFO, "job %s completed", "abc"))
    assert LINE.match(line) and line[8:18] == " INFO     " and line.endswith("job abc completed")
    assert "\x1b" not in line


def test_a_traceback_follows_its_line() -> None:
    text = TextLineFormatter(colour=False).format(_record(logging.ERROR, "handler failed", exc=True))
    first, *rest = text.splitlines()
    assert LINE.match(first) and first.endswith("handler failed")
    assert rest[0].startswith("Traceback") and rest[-1] == "ValueError: boom"


def test_colour_marks_the_time_and_the_level_only() -> None:
    line = TextLineFormatter(colour=True).format(_record(logging.WARNING, "slow"))
    assert line.startswith("\x1b[2;36m") and "\x1b[31mWARNING \x1b[0m slow" in line
    assert re.sub(r"\x1b\[[0-9;]*m", "", line)[8:] == " WARNING  slow"


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": ""}, True, False),
        ({"TERM": "dumb"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
    ],
)
def test_colour_follows_the_terminal_and_the_usual_variables(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], tty: bool, expected: bool
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    assert wants_colour(Stream()) is expected


def test_the_text_format_masks_a_password_before_the_line_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        configure_logging("info", "text")
        logging.getLogger("monque_tui.worker").info("opened mongodb://ops:s3cret@db.example/jobs")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
    written = stream.getvalue()
    assert "s3cret" not in written and LINE.match(written.splitlines()[0])
