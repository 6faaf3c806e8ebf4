"""Logging for the headless modes: rich lines for people, JSON lines for log collectors.

Job events are logged with a structured ``monque`` dict in ``extra``; the text format
renders the message, the JSON format merges the dict into the object, so both formats
carry the same facts and a collector never has to parse prose.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from monque_engine.store.urls import mask_text

FIELDS_ATTR = "monque"

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class MaskPasswords(logging.Filter):
    """Mask ``user:password@`` in every record before any handler renders it.

    Installed on the handler (not a logger), so it sees records from every library that
    propagates to the root, including a driver's or a user's handler's own log lines. The
    message is rendered here once (``msg % args``), then masked; the structured fields and
    a traceback's text are masked too, so neither format can leak through a side door.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string is logging's to report
            return True
        record.msg, record.args = mask_text(message), None
        fields = getattr(record, FIELDS_ATTR, None)
        if isinstance(fields, dict):
            setattr(record, FIELDS_ATTR, {key: _mask_value(value) for key, value in fields.items()})
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_text(record.exc_text)
        return True


def _mask_value(value: Any) -> Any:
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, list | tuple):
        return type(value)(_mask_value(item) for item in value)
    return value


class JsonLineFormatter(logging.Formatter):
    """One JSON object per line: ts, level, event, message, then the event's fields."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = dict(getattr(record, FIELDS_ATTR, None) or {})
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "event": fields.pop("event", "log"),
            "message": record.getMessage(),
            "logger": record.name,
        }
        data.update(fields)
        if record.exc_info or record.exc_text:
            data["exc"] = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
        return json.dumps(data, default=str, ensure_ascii=False, separators=(",", ":"))


def _rich_handler(level: int) -> logging.Handler:
    from rich.console import Console, ConsoleRenderable, Group
    from rich.logging import RichHandler
    from rich.text import Text

    class LineRichHandler(RichHandler):
        """RichHandler's colours, one unpadded line per record.

        The stock handler lays each record out as a full-width table, which pads every line
        to the terminal width and, off a terminal, wraps long events over several lines;
        a log line that is one grep-able line matters more here than a column layout.
        """

        def render(
            self, *, record: logging.LogRecord, traceback: Any, message_renderable: ConsoleRenderable
        ) -> ConsoleRenderable:
            when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
            line = Text.assemble((when, "log.time"), " ", self.get_level_text(record), " ")
            if isinstance(message_renderable, Text):
                line.append_text(message_renderable)
            else:  # pragma: no cover - messages are always Text with markup off
                return Group(line, message_renderable)
            return line if traceback is None else Group(line, traceback)

    # soft_wrap: never insert line breaks; a terminal wraps long lines by itself.
    console = Console(stderr=True, soft_wrap=True)
    return LineRichHandler(level=level, console=console, show_path=False, markup=False, rich_tracebacks=False)


def configure_logging(level: str = "info", fmt: str = "text") -> None:
    """Install one handler on the root logger (replacing any), so engine logs share the format."""
    numeric = LEVELS.get(level, logging.INFO)
    if fmt == "json":
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonLineFormatter())
    else:
        handler = _rich_handler(numeric)
    handler.addFilter(MaskPasswords())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(numeric)


def flush_logging() -> None:
    """Before os._exit: push out what the handlers hold, since no atexit hook will run."""
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
