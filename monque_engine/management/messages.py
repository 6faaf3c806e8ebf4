"""What an adapter hands the core and gets back: ``ApiRequest``, ``ApiResponse``, and the
``authorize`` hook's type, with the policy that asks it (read-only first)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ApiRequest:
    """A request as the core sees it. ``path`` is below the mount point (``/api/v1/jobs``);
    ``native`` is the adapter's own request (an ASGI scope, an aiohttp request), for
    ``authorize`` to read headers or a user from."""

    method: str
    path: str
    query: Sequence[tuple[str, str]] = ()
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    native: Any = None


@dataclass(frozen=True, slots=True)
class ApiResponse:
    status: int
    body: dict[str, Any]
    #: Headers the answer needs besides its JSON type (``Allow`` on a 405, as RFC 9110 requires).
    headers: Mapping[str, str] = field(default_factory=dict)

    def json_bytes(self) -> bytes:
        """The body as UTF-8 JSON. A lone surrogate (a payload written around the engine's
        checks) cannot be UTF-8: that body is written with ASCII escapes (``\\ud800``), as
        JavaScript's ``JSON.stringify`` writes it, rather than failing in the adapter after
        the core's error handling (a plain-text 500, and the whole page lost)."""
        try:
            return json.dumps(self.body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except UnicodeEncodeError:
            return json.dumps(self.body, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


#: ``authorize(action, request)``: True allows. ``action`` is one of upstream's ``read``,
#: ``cancel``, ``cancelBulk``, ``retry``, ``retryBulk``, ``reschedule``, ``delete``,
#: ``deleteBulk``, or ours, ``pause`` and ``resume``. May be a coroutine function.
Authorize = Callable[[str, ApiRequest], bool | Awaitable[bool]]


class Policy:
    """Who may do what: never a write when read-only, then ``authorize(action, request)``."""

    def __init__(self, read_only: bool, authorize: Authorize | None) -> None:
        self.read_only = read_only
        self.authorize = authorize

    async def allowed(self, action: str, request: ApiRequest) -> bool:
        if self.read_only and action != "read":
            return False
        if self.authorize is None:
            return True
        verdict = self.authorize(action, request)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return verdict is True
