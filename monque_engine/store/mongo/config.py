"""``mongodb://`` and ``mongodb+srv://`` URLs: which database, which hosts, how long to wait.

Parsed by hand rather than with ``pymongo.uri_parser`` because that resolves SRV records
(network I/O) and we only need three facts before connecting: the hosts to name in an
error, the database from the path, and whether the URL already sets
``serverSelectionTimeoutMS``. Everything else in the URL is the driver's business.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus

from bson.codec_options import DatetimeConversion
from pymongo.errors import ConfigurationError
from pymongo.uri_parser import split_options

from ..base import InvalidCollectionNameError, JobStore, StoreLocation
from ..urls import InvalidStoreUrlError, mask_occurrences, mask_secrets, mask_url

DEFAULT_DATABASE = "monque"
#: How long the *first* ping waits for a server, unless the URL or a kwarg sets
#: serverSelectionTimeoutMS: a console or worker that cannot reach its database should say
#: so quickly. Only that ping is bounded; operations keep the driver's 30 s default (as
#: upstream does), which rides out an election (10–12 s) instead of failing the
#: completions and failures written meanwhile, retryable-write retry included.
DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 5_000
#: socketTimeoutMS for operations unless the URL sets socketTimeoutMS or timeoutMS: the
#: driver's default is none, so an operation on a half-open connection would wait for TCP
#: keepalive (minutes). It is above the 30 s maxTimeMS of stats and listings, and far above
#: a change stream's getMore wait (1 s), so only a dead connection reaches it.
DEFAULT_SOCKET_TIMEOUT_MS = 60_000
_OWN_SOCKET_TIMEOUT = ("sockettimeoutms", "timeoutms")


class InvalidMongoUrlError(InvalidStoreUrlError):
    """A MongoDB URL that cannot be used; an ``InvalidStoreUrlError`` like every bad store URL."""


@dataclass(frozen=True, slots=True)
class MongoSettings:
    url: str
    display_url: str
    hosts: str  # "h1:27017,h2" as written in the URL (no credentials): for messages
    database: str
    server_selection_timeout_ms: int  # how long the first ping waits (see the constants)
    timeout_in_url: bool
    client_options: dict[str, Any] = field(default_factory=dict)
    url_option_names: frozenset[str] = frozenset()  # lower-cased query parameter names

    def driver_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``AsyncMongoClient``: the caller's options, plus our socket
        timeout unless the URL or the caller chose one. serverSelectionTimeoutMS is passed
        only when the caller gave it; otherwise operations keep the driver's default."""
        kwargs = dict(self.client_options)
        chosen = self.url_option_names | {key.lower() for key in kwargs}
        if not chosen & set(_OWN_SOCKET_TIMEOUT):
            kwargs["socketTimeoutMS"] = DEFAULT_SOCKET_TIMEOUT_MS
        # Decode what other programs may have written instead of failing a whole reply on
        # it: a date outside Python's range arrives as DatetimeMS, bad UTF-8 as U+FFFD.
        if "datetime_conversion" not in chosen:
            kwargs["datetime_conversion"] = DatetimeConversion.DATETIME_AUTO
        if "unicode_decode_error_handler" not in chosen:
            kwargs["unicode_decode_error_handler"] = "replace"
        return kwargs

    def mask(self, text: str) -> str:
        """Remove this URL's password (raw and percent-decoded) from any message."""
        return mask_password(text, self.url)


def _split(rest: str) -> tuple[str | None, str, str]:
    """``user:pw@h1,h2/db?x=1`` -> (userinfo or None, "h1,h2", "/db?x=1")."""
    before_query = rest.split("?", 1)[0]
    at = before_query.rfind("@")
    userinfo = rest[:at] if at >= 0 else None
    start = at + 1
    ends = [p for p in (rest.find("/", start), rest.find("?", start)) if p >= 0]
    end = min(ends) if ends else len(rest)
    return userinfo, rest[start:end], rest[end:]


def mask_password(text: str, url: str) -> str:
    """``mask_secrets`` plus the percent-decoded password, which drivers may echo."""
    masked = mask_secrets(text, url)
    _, sep, rest = url.partition("://")
    if not sep:
        return masked
    userinfo, _, _ = _split(rest)
    if userinfo and ":" in userinfo:
        password = userinfo.split(":", 1)[1]
        # As written, percent-decoded, and as the driver decodes it (``+`` as a space); a short
        # one only where it stands alone ("p" once made "o***tion not acce***ted").
        for form in sorted({password, unquote(password), unquote_plus(password)}, key=len, reverse=True):
            if form:
                masked = mask_occurrences(masked, form)
    return masked


def _check_url_options(url: str, query: str) -> None:
    """Refuse URL options the driver would only warn about and then ignore.

    ``AsyncMongoClient`` parses its URL with warnings, not errors: a misspelt option
    (``replSet=rs0``) or an impossible value (``authMechanism=NOPE``) prints a two-line
    ``UserWarning`` (over the console's screen, too) and is dropped, so the store runs
    without what the user asked for. Node's driver refuses such URLs; so do we, naming
    the option. Values are never quoted back (a TLS key password may be one).
    """
    if not query:
        return
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            split_options(query, validate=True, warn=False)
    except (ConfigurationError, ValueError, TypeError, OSError) as error:
        # OSError: a TLS file option (tlsCAFile, tlsCertificateKeyFile, tlsCRLFile) naming a
        # missing file or a directory; it escaped as FileNotFoundError ("internal error", exit 1).
        culprit = _failing_option(query)
        reason = mask_password(str(error).replace(" Refer to docstring.", ""), url)
        where = f"option {culprit!r}" if culprit else "options"
        raise InvalidMongoUrlError(
            f"MongoDB URL {mask_url(url)!r}: {where} not accepted by the driver ({reason}); fix or remove it"
        ) from None
    for warning in caught:
        duplicate = re.match(r"Duplicate URI option '([^']+)'", str(warning.message))
        if duplicate:
            raise InvalidMongoUrlError(
                f"MongoDB URL {mask_url(url)!r}: option {duplicate.group(1)!r} is given more than once; keep one"
            )


def _check_hosts_and_userinfo(url: str, scheme: str, userinfo: str | None, hosts: str) -> None:
    """What the driver refuses only when the client is made, at initialize(): a port out of
    range, a user name or password with an unescaped ``%`` ``:`` or ``@``. They raised then as
    "cannot reach" (``ConnectionError``), on every call; now as a bad URL, when it is given.
    (No DNS: a mongodb+srv host is only checked to be one name without a port.)"""
    from pymongo.errors import InvalidURI
    from pymongo.uri_parser import parse_userinfo, split_hosts

    try:
        if userinfo is not None:
            parse_userinfo(userinfo)
        if scheme == "mongodb":
            split_hosts(hosts)
        elif "," in hosts or ":" in hosts:
            raise ValueError("a mongodb+srv URL names one host name, without a port")
    except (InvalidURI, ValueError, ConfigurationError) as error:
        reason = mask_password(str(error), url)
        raise InvalidMongoUrlError(f"MongoDB URL {mask_url(url)!r}: {reason}") from None


def _failing_option(query: str) -> str | None:
    for pair in re.split("[&;]", query):
        if not pair:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                split_options(pair, validate=True, warn=False)
        except (ConfigurationError, ValueError, TypeError, OSError):
            return unquote(pair.split("=", 1)[0])
    return None


def parse_mongo_url(
    url: str,
    *,
    database: str | None = None,
    server_selection_timeout_ms: int | None = None,
    **client_options: Any,
) -> MongoSettings:
    """Split a MongoDB URL into what the store needs; other kwargs go to the driver."""
    if not isinstance(url, str):
        raise InvalidMongoUrlError(f"MongoDB URL must be a string, got {type(url).__name__}")
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("mongodb", "mongodb+srv"):
        raise InvalidMongoUrlError(
            f"Not a MongoDB URL: {mask_url(url)!r}; use mongodb://host/db or mongodb+srv://host/db"
        )
    userinfo, hosts, remainder = _split(rest)
    if not hosts:
        raise InvalidMongoUrlError(f"MongoDB URL {mask_url(url)!r} names no host; use mongodb://host/db")
    _check_hosts_and_userinfo(url, scheme.lower(), userinfo, hosts)
    path, _, query = remainder.partition("?")
    path_db = unquote(path.lstrip("/")) if path else ""
    _check_url_options(url, query)
    options = {key.lower(): value for key, value in parse_qsl(query, keep_blank_values=True)}
    timeout_in_url = "serverselectiontimeoutms" in options
    if server_selection_timeout_ms is None:
        timeout = DEFAULT_SERVER_SELECTION_TIMEOUT_MS
        if timeout_in_url:
            try:
                timeout = int(float(options["serverselectiontimeoutms"]))
            except ValueError:
                raise InvalidMongoUrlError(f"serverSelectionTimeoutMS in {mask_url(url)!r} is not a number") from None
    else:
        if (
            isinstance(server_selection_timeout_ms, bool)
            or not isinstance(server_selection_timeout_ms, int | float)
            or server_selection_timeout_ms <= 0
        ):
            raise InvalidMongoUrlError(
                f"server_selection_timeout_ms must be a positive number of ms, got {server_selection_timeout_ms!r}"
            )
        timeout = int(server_selection_timeout_ms)
        client_options["serverSelectionTimeoutMS"] = timeout
    name = database or path_db or DEFAULT_DATABASE
    if any(c in name for c in '/\\. "$\x00') or len(name) > 63:
        raise InvalidMongoUrlError(f'Invalid MongoDB database name {name!r} (no / \\ . space " $, at most 63 chars)')
    return MongoSettings(
        url=url,
        display_url=mask_url(url),
        hosts=hosts,
        database=name,
        server_selection_timeout_ms=timeout,
        timeout_in_url=timeout_in_url,
        client_options=client_options,
        url_option_names=frozenset(options),
    )


def check_collection_name(name: str) -> str:
    """MongoDB's rules for a collection name (besides having one): no ``$`` and no NUL, and
    not in the ``system.`` namespace the server keeps for itself. Refused here, in one line,
    instead of by the driver or the server once the store is opened."""
    JobStore.check_collection_name(name)
    if "$" in name or "\x00" in name or name.startswith("system."):
        raise InvalidCollectionNameError(
            f"Collection name {name!r} cannot be a MongoDB collection name (no $ or NUL, not starting with "
            "'system.'); use letters, digits and underscores (e.g. monque_jobs)"
        )
    return name


def locate(url: str) -> StoreLocation:
    """A server's URL, checked; whether its database and collection exist is not known
    without connecting (and MongoDB makes both on first write), so those stay None."""
    parse_mongo_url(url)
    return StoreLocation("mongodb")
