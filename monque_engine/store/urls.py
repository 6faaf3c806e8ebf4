"""URL helpers shared by every store and the CLI: above all, never show a password.

Masking works on any text, not only on a well-formed URL: people type ``mongodb:/u:p@h``,
``mongodb//u:p@h``, a leading space, or a password with an unescaped ``@`` in it, and
drivers and tracebacks echo whatever they were given. So the rule is deliberately blunt:
within each whitespace-separated token, everything between the ``:`` after the user name
and the **last** ``@`` of the token is the password. Masking a little too much (a host
name after an ``@`` in a query string) costs readability; masking too little leaks a
secret, so every ambiguity is resolved towards masking. A password containing whitespace
cannot be told apart from the words around it in free text; ``mask_secrets``, which knows
the URL, still removes it. Query parameters that carry a secret (``tlsCertificateKeyFilePassword=``,
any ``…password=`` / ``…secret=`` / ``…token=``, ``AWS_SESSION_TOKEN:`` in
``authMechanismProperties``) have their value masked the same way.
"""

from __future__ import annotations

import re

from ..errors import MonqueError

MASK = "***"


class InvalidStoreUrlError(MonqueError, ValueError):
    """A store URL no store can open. Defined here, below the stores and ``monque_engine.store``,
    so the stores' URL parsers need not import the package that opens them (an import circle)."""


#: A whitespace-free run of text: the unit in which a URL (and its password) can hide.
_TOKEN = re.compile(r"\S+")
_SCHEME_NAME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


def _ends_scheme_name(head: str, colon: int) -> bool:
    """Whether ``head[:colon]`` ends with something shaped like a URL scheme (``mongodb``)."""
    start = colon
    while start > 0 and head[start - 1] in _SCHEME_CHARS:
        start -= 1
    return _SCHEME_NAME.fullmatch(head, start, colon) is not None


def _password_span(token: str) -> tuple[int, int] | None:
    """Where the password of a ``user:password@`` inside ``token`` is, as (start, end).

    The password ends at the token's last ``@``. It starts after the first colon, unless
    that colon ends a scheme (``x://``; ``x:/`` only when another colon follows, since
    ``u:/pw@h`` is a user with a password starting with a slash), in which case it starts
    after the next colon.
    """
    at = token.rfind("@")
    if at <= 0:
        return None
    head = token[:at]
    colons = [index for index, char in enumerate(head) if char == ":"]
    if not colons:
        return None  # ``user@host``: a user name alone is not a secret
    first = colons[0]
    if head.startswith("/", first + 1) and _ends_scheme_name(head, first):
        later = colons[1:]
        if not later and not head.startswith("//", first + 1):
            later = colons[:1]
        if not later:
            return None  # ``sqlite:///a@b.db``: a scheme, then no password at all
        first = later[0]
    return first + 1, at


#: A query parameter whose *value* is a secret: ``tlsCertificateKeyFilePassword=…`` (and any
#: other ``…password=``, ``…secret=``, ``…token=``), and the ``AWS_SESSION_TOKEN:…`` entry of
#: ``authMechanismProperties``. Raw or percent-encoded, the value ends at the next separator.
#: A secret query value, up to the next separator; a closing quote and colon that end the
#: token are the text's, not the value's ("URL 'mongodb://h/db?mysecret=x': …" lost its
#: closing quote to the mask: a docs probe).
_QUERY_SECRET = re.compile(
    r"(?i)((?:[?&;]|^)[\w.\-]*(?:password|secret|token|pwd)[\w.\-]*=|aws_session_token(?::|%3a))"
    r"([^&;#,\s]*?)(?=['\"]?[:)]?(?:$|[&;#,\s]))"
)


def _mask_token(token: str) -> str:
    if "=" in token or "%3" in token or ":" in token:
        token = _QUERY_SECRET.sub(lambda match: match.group(1) + MASK if match.group(2) else match.group(0), token)
    span = _password_span(token)
    if span is None:
        return token
    return f"{token[: span[0]]}{MASK}{token[span[1] :]}"


def mask_text(text: str) -> str:
    """Replace every ``user:password@`` password in ``text`` with ``***``.

    Works on free text (log lines, driver errors, tracebacks) as well as on a bare URL.
    Whitespace is kept exactly, so a masked line has the shape of the original.
    """
    if "@" not in text and "=" not in text and "aws_session_token" not in text.lower():
        return text
    return _TOKEN.sub(lambda match: _mask_token(match.group()), text)


def mask_url(url: str) -> str:
    """Replace the password in ``scheme://user:password@host`` (or anything URL-like) with ``***``."""
    return mask_text(url)


def mask_occurrences(text: str, secret: str) -> str:
    """``secret`` replaced by ``***`` in ``text``: everywhere once it is 3 characters or more;
    a shorter one only where it stands alone (no letter or digit either side), or a password
    ``p`` turned "option not accepted" into "o***tion not acce***ted" (probe finding)."""
    if len(secret) >= 3:
        return text.replace(secret, MASK)
    return re.sub(rf"(?<![^\W_]){re.escape(secret)}(?![^\W_])", MASK, text)


def mask_secrets(text: str, url: str) -> str:
    """Mask a URL's password wherever it appears in a message (e.g. a driver's error).

    Besides every ``user:password@`` in the text, the password of ``url`` is replaced
    wherever it occurs on its own, as drivers quote it in auth errors.
    """
    masked = mask_text(text)
    # The URL as a whole, not token by token: a password may contain a space.
    span = _password_span(url.strip())
    password = url.strip()[span[0] : span[1]] if span is not None else None
    if password:
        masked = mask_occurrences(masked, password)
    # Secrets carried in the query (a TLS key password, a session token), wherever a driver echoes them.
    for match in _QUERY_SECRET.finditer(url.strip().partition("?")[2]):
        secret = match.group(2)
        if len(secret) >= 3:  # a one- or two-character value would mask every such run in the text
            masked = masked.replace(secret, MASK)
    return masked
