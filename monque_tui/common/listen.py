"""The one reading of a listen address, for ``--metrics`` (cli) and ``--serve`` (serve) alike.

It lives here, below both, so the command line and the browser server need not import each
other (``serve`` never imports ``cli``: an import contract in pyproject.toml).
"""

from __future__ import annotations

#: Where an address without a HOST listens: this machine only (an explicit HOST, e.g.
#: 0.0.0.0:9464, is how to expose ``--metrics`` to a Prometheus elsewhere).
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
