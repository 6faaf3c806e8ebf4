"""The one reading of a listen address, for ``--metrics`` (cli) and ``--serve`` (serve) alike.

It lives here, below both, so the command line and the browser server need not import each
other (``serve`` never imports ``cli``: an import contract in pyproject.toml).
"""

from __future__ import annotations

import ipaddress
import socket

from .exitcodes import CliError, ExitCode

#: Where an address without a HOST listens: this machine only (an explicit HOST, e.g.
#: 0.0.0.0:9464 with --allow-remote, is how to expose ``--metrics`` to a Prometheus elsewhere).
DEFAULT_LISTEN_HOST = "127.0.0.1"


def parse_listen_address(text: str, example_port: int = 9464) -> tuple[str, int]:
    """``[HOST:]PORT`` (``[::1]:9464`` for IPv6) -> (host, port); port 0 picks a free one.

    The host defaults to this machine only (``DEFAULT_LISTEN_HOST``). Raises ``ValueError``
    with a message that reads well after "--metrics ...:" or "MONQUE_SERVE=...:"."""
    example = f"e.g. {example_port} or 0.0.0.0:{example_port}"
    value = text.strip()
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "", value
    elif not host:
        raise ValueError(f"expected [HOST:]PORT, {example}")  # ":9464": a host was meant, and is missing
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"put an IPv6 address in brackets, e.g. [::1]:{example_port}")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"expected [HOST:]PORT, {example}") from None
    if not 0 <= port <= 65535:
        raise ValueError("expected a port from 0 to 65535")
    if any(c.isspace() or c in "/?#@" for c in host):
        raise ValueError(f"expected [HOST:]PORT, {example}")
    return host or DEFAULT_LISTEN_HOST, port


#: Host names that mean this machine only.
_LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback_host(host: str) -> bool:
    """127.0.0.0/8, ::1 or ``localhost``: only this machine can connect."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard_host(host: str) -> bool:
    """0.0.0.0, ``::`` (or a short form the socket layer reads as 0.0.0.0, e.g. ``0``): every interface."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        pass
    try:
        return socket.inet_aton(host) == b"\0\0\0\0"
    except OSError:
        return False


def format_listen_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def check_remote_listen(origin: str, host: str, port: int, allow_remote: bool) -> None:
    """Listening beyond loopback (``--serve``, ``--metrics``) only when ``--allow-remote`` says so.

    ``origin`` names the setting as the user gave it ("--metrics" or "MONQUE_METRICS"). Raises
    ``CliError`` (exit 2) with the fix."""
    if allow_remote or is_loopback_host(host):
        return
    raise CliError(
        f"{origin} {format_listen_address(host, port)} would accept connections from other machines; "
        f"add --allow-remote (or MONQUE_ALLOW_REMOTE=1) to mean it, or listen on 127.0.0.1:{port}",
        ExitCode.USAGE,
    )
