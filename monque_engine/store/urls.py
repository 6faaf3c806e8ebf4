"""URL helpers shared by every store and the CLI: above all, never show a password."""

from __future__ import annotations

import re

_USERINFO = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^:@/]*)(?::(?P<password>[^@/]*))?@")


def mask_url(url: str) -> str:
    """Replace the password in ``scheme://user:password@host`` with ``***``."""
    match = _USERINFO.match(url)
    if not match or match.group("password") is None:
        return url
    return f"{match.group('scheme')}{match.group('user')}:***@{url[match.end():]}"


def mask_secrets(text: str, url: str) -> str:
    """Mask a URL's password wherever it appears in a message (e.g. a driver's error)."""
    match = _USERINFO.match(url)
    if not match or not match.group("password"):
        return text
    return text.replace(url, mask_url(url)).replace(match.group("password"), "***")
