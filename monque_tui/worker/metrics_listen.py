"""Start a ``--metrics`` endpoint and say where it listens: one worker's (``runner``) and a
``--processes`` group's (``supervisor``) start the same way, so a port that cannot be
bound is the same one-line usage error and the log names the same URL form."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

from ..common.exitcodes import CliError, ExitCode
from .job_log import emit


class _Listening(Protocol):
    @property
    def address(self) -> tuple[str, int]: ...


Server = TypeVar("Server", bound=_Listening)


def listen(start: Callable[[], Server], host: str, port: int, what: str) -> Server:
    """``start()`` the endpoint on ``host:port``; log ``what`` at its URL (``metrics:serving``)."""
    try:
        server = start()
    except OSError as error:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise CliError(
            f"--metrics {where}: cannot listen there ({error.strerror or error}); pick another port or host",
            ExitCode.USAGE,
        ) from None
    bound_host, bound_port = server.address
    url = f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}/metrics"
    emit(logging.INFO, "metrics:serving", f"{what} at {url}", url=url, port=bound_port)
    return server
