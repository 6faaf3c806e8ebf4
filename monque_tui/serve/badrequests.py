"""A malformed HTTP request as one log line, not aiohttp's traceback.

aiohttp answers a request it cannot parse (a NUL in a header, a request line over 8 KB, a
body cut short) with a 400 itself, then logs "Error handling request" with the parser's
traceback at ERROR (and a body that is not what its Content-Encoding says, again, when
it drains the body after the answer). Anyone who can reach the port can send those, so each would put a
traceback in the server's log, where an operator looks for real faults. This filter keeps
the record, as one WARNING line naming what was wrong; an error raised by a handler (a real
fault) keeps its traceback.
"""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

#: aiohttp's logger for its protocol handling.
SERVER_LOGGER = "aiohttp.server"


class OneLineBadRequests(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            self._shorten(record)
        except Exception:  # noqa: BLE001 - a filter that raises breaks aiohttp's answer (a 500): keep the record
            pass
        return True

    @staticmethod
    def _shorten(record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, RequestPayloadError) and isinstance(error.__cause__, HttpProcessingError):
            # a body not as its Content-Encoding says: aiohttp raises it again (logged as
            # "Unhandled exception") when it drains the body after the handler's 400
            error = error.__cause__
        if isinstance(error, HttpProcessingError):
            said = record.getMessage()
            reason = (str(error.message) or type(error).__name__).strip().splitlines()[0]
            # never the request's bytes: a too-long request line would log its URL (a token in it)
            reason = reason.split("bytearray(", 1)[0].split(" b'", 1)[0].rstrip(": ")
            record.msg = "%s (answered 400): %s %s"
            record.args = (said, type(error).__name__, reason[:200])
            record.exc_info = None
            record.exc_text = None
            record.levelno = logging.WARNING
            record.levelname = logging.getLevelName(logging.WARNING)


def quiet_bad_requests() -> None:
    """Install the filter on aiohttp's server logger (once)."""
    logger = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(existing, OneLineBadRequests) for existing in logger.filters):
        logger.addFilter(OneLineBadRequests())
