"""What ``--serve`` was asked to do: the address, the token, the limits; checked up front.

Everything here is plain Python (no aiohttp), so a bad flag fails in one line even when the
``serve`` extra is not installed.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..common.exitcodes import CliError, ExitCode
from ..common.listen import format_listen_address, is_loopback_host, is_wildcard_host, parse_listen_address
from .names import SESSION_LIFETIME_ENV, TOKEN_ENV, TOKEN_FILE_ENV

#: Short tokens can be guessed; a generated one has 43 characters (256 bits).
MIN_TOKEN_LENGTH = 16
DEFAULT_SESSION_LIFETIME = 12 * 3600.0
#: A cookie's Max-Age is whole seconds; a year is longer than any login should last.
MAX_SESSION_LIFETIME = 366 * 86400.0
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True)
class ServeAddress:
    """Where ``--serve`` listens."""

    host: str
    port: int

    @property
    def is_loopback(self) -> bool:
        return is_loopback_host(self.host)

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}"


def parse_address(text: str) -> ServeAddress:
    """``PORT``, ``HOST:PORT`` or ``[IPv6]:PORT``; the host defaults to 127.0.0.1 (the one
    listen-address reading, ``common.listen.parse_listen_address``, as ``--metrics`` uses)."""
    host, port = parse_listen_address(text, example_port=8080)
    return ServeAddress(host, port)


def parse_public_url(text: str) -> str:
    """The origin browsers use, e.g. ``https://jobs.example.com`` behind a TLS proxy."""
    value = text.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL, e.g. https://jobs.example.com")
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("expected a bare origin (scheme, host and port, no path), e.g. https://jobs.example.com")
    return value


def parse_session_lifetime(text: str) -> float:
    """``90s``, ``30m``, ``12h``, ``7d`` or plain seconds; at least a second, at most a year."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text.strip().lower())
    if match is None:
        raise ValueError("expected a duration such as 30m, 12h or 7d (or seconds)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not 1 <= seconds <= MAX_SESSION_LIFETIME:
        raise ValueError("expected a duration from 1s to 366d")
    return seconds


def resolve_session_lifetime(flag: float | None, environ: dict[str, str] | os._Environ[str]) -> float:
    """``--session-lifetime``, else ``MONQUE_SERVE_SESSION_LIFETIME``, else 12 hours."""
    if flag is not None:
        return flag
    raw = environ.get(SESSION_LIFETIME_ENV, "").strip()
    if not raw:
        return DEFAULT_SESSION_LIFETIME
    try:
        return parse_session_lifetime(raw)
    except ValueError as error:
        raise CliError(f"{SESSION_LIFETIME_ENV}={raw!r}: {error}", ExitCode.USAGE) from None


@dataclass(frozen=True, slots=True)
class Token:
    """The token ``--serve`` asks browsers for, and where it came from."""

    value: str
    #: Where it came from, for the banner: "generated", "MONQUE_SERVE_TOKEN" or the file.
    source: str

    @property
    def generated(self) -> bool:
        return self.source == "generated"


def load_token(token_file: str | None, environ: dict[str, str] | os._Environ[str]) -> Token:
    """The token from ``--token-file``, ``MONQUE_SERVE_TOKEN_FILE``, ``MONQUE_SERVE_TOKEN``, or a new one."""
    path = token_file or environ.get(TOKEN_FILE_ENV, "").strip() or None
    if path is not None:
        origin = "--token-file" if token_file else TOKEN_FILE_ENV
        try:
            info = os.stat(path)
            with open(path, encoding="utf-8") as file:
                first = file.readline()
        except (OSError, UnicodeDecodeError) as error:
            raise CliError(f"{origin} {path!r}: cannot read the token: {error}", ExitCode.USAGE) from None
        if not stat.S_ISREG(info.st_mode):
            raise CliError(f"{origin} {path!r}: not a regular file", ExitCode.USAGE)
        return Token(_checked(first.strip(), f"{origin} {path!r}"), str(Path(path)))
    value = environ.get(TOKEN_ENV, "").strip()
    if value:
        return Token(_checked(value, TOKEN_ENV), TOKEN_ENV)
    import secrets  # here: it imports hmac and hashlib (OpenSSL), a few ms of every console's launch

    return Token(secrets.token_urlsafe(32), "generated")


def _checked(value: str, origin: str) -> str:
    if len(value) < MIN_TOKEN_LENGTH:
        raise CliError(
            f"{origin}: the token has {len(value)} characters; use at least {MIN_TOKEN_LENGTH} "
            '(e.g. python3 -c "import secrets; print(secrets.token_urlsafe(32))")',
            ExitCode.USAGE,
        )
    if any(ord(char) < 33 or ord(char) == 127 for char in value):
        raise CliError(f"{origin}: the token may not hold spaces or control characters", ExitCode.USAGE)
    return value


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """``--serve``'s settings, checked before anything listens."""

    address: ServeAddress
    token: Token
    #: The origin browsers use; None: http://HOST:PORT as bound.
    public_url: str | None
    max_sessions: int
    read_only: bool
    #: The environment of every session's console process (MONQUE_URL, settings; no token).
    child_environment: dict[str, str]
    log_level: str = "info"
    log_format: str = "text"
    #: Seconds a browser's login lasts.
    session_lifetime: float = DEFAULT_SESSION_LIFETIME
    #: The store the server's own Monque opens for the management API (``/api/...``; read-only
    #: already applied to a SQLite URL), and its ``Monque(**options)``; "" serves no API.
    store_url: str = ""
    monque_options: dict[str, Any] = field(default_factory=dict)


def check_address(address: ServeAddress, allow_remote: bool, public_url: str | None = None) -> None:
    """Binding beyond loopback exposes a page that can delete every job: only on request, and
    only with a URL other machines can open (every interface has no address to print)."""
    where = format_listen_address(address.host, address.port)
    if not address.is_loopback and not allow_remote:
        raise CliError(
            f"--serve {where} would accept connections from other machines; "
            "add --allow-remote to mean it (and put a TLS reverse proxy in front: see docs/operations.md), "
            f"or serve on 127.0.0.1:{address.port}",
            ExitCode.USAGE,
        )
    if public_url is not None and is_wildcard_host(urlsplit(public_url).hostname or ""):
        raise CliError(
            f"--public-url {public_url}: a browser cannot open an every-interface address; "
            "give the host name or address other machines use",
            ExitCode.USAGE,
        )
    if public_url is None and is_wildcard_host(address.host):
        raise CliError(
            f"--serve {where} listens on every interface, so there is no one address to send browsers to; "
            "add --public-url with the URL they open (e.g. https://jobs.example.com behind a TLS proxy, "
            f"or http://HOSTNAME:{address.port or 8080}), or serve on one address",
            ExitCode.USAGE,
        )


def plain_http_warning(public_url: str) -> str | None:
    """The warning for a console other machines reach over plain HTTP, or None."""
    host = urlsplit(public_url).hostname or ""
    if not public_url.startswith("http://") or is_loopback_host(host):
        return None
    return (
        f"warning: {public_url} is plain HTTP: the token, the login link, the session cookie and every key "
        "cross the network unencrypted; put a TLS reverse proxy in front and give --public-url https://... "
        "(docs/operations.md)"
    )
