"""A scripted MongoDB wire-protocol server for driver-level tests (see ``server.py``)."""

from .server import (
    CLOSE,
    COMMAND_NOT_FOUND,
    HANG,
    Action,
    Delay,
    Error,
    Handler,
    HelloOptions,
    Hold,
    Request,
    WireServer,
    cursor_reply,
    hello_as,
)

__all__ = [
    "CLOSE",
    "COMMAND_NOT_FOUND",
    "HANG",
    "Action",
    "Delay",
    "Error",
    "Handler",
    "HelloOptions",
    "Hold",
    "Request",
    "WireServer",
    "cursor_reply",
    "hello_as",
]
