"""What server the store talks to: its version (checked once at connect) and its topology.

The minimum is MongoDB 4.4.2: the bulk retry's per-document stagger uses ``$rand`` (4.4.2)
and the topology check uses ``hello`` (4.4.2, backported). Below it the store would fail
later and confusingly (a bulk retry raising "Unrecognized expression '$rand'"), so
``open()`` refuses at once with one clear message. The version comes from ``buildInfo``;
where a deployment does not allow that command, ``maxWireVersion`` from ``hello`` still
tells 4.4 from older servers (it cannot tell 4.4.0 from 4.4.2).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pymongo.errors import OperationFailure

from ...errors import UnsupportedServerVersionError

MINIMUM_VERSION = (4, 4, 2)
MINIMUM_TEXT = "4.4.2"
#: maxWireVersion of MongoDB 4.4 (the protocol version a 4.4 server reports).
WIRE_VERSION_4_4 = 9
_WHY = "$rand for the bulk-retry stagger and the hello command"
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")

Command = Callable[[str], Awaitable[Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class ServerInfo:
    version: str  # "7.0.5", or "wire 21" when buildInfo was not allowed
    supports_transactions: bool  # a replica set or a sharded cluster


def parse_version(build_info: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """(major, minor, patch) from buildInfo's ``versionArray`` or ``version`` text."""
    array = build_info.get("versionArray")
    if isinstance(array, list | tuple) and len(array) >= 3 and all(isinstance(v, int) for v in array[:3]):
        return int(array[0]), int(array[1]), int(array[2])
    match = _VERSION.match(str(build_info.get("version", "")))
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


async def inspect_server(command: Command, where: str) -> ServerInfo:
    """Run ``hello`` and ``buildInfo`` on the admin database; raise
    ``UnsupportedServerVersionError`` below 4.4.2. Driver errors propagate (the caller
    translates them)."""
    try:
        hello = await command("hello")
    except OperationFailure:
        # Servers before 4.4.2 (and 4.2.10) do not know hello: ask the legacy way, so
        # that the version check below can name the version instead of failing obscurely.
        hello = await command("isMaster")
    transactions = bool(hello.get("setName")) or hello.get("msg") == "isdbgrid"
    try:
        build_info = await command("buildInfo")
    except OperationFailure:
        build_info = {}  # not allowed here (some hosted proxies): fall back to the wire version
    version = parse_version(build_info)
    if version is not None:
        text = str(build_info.get("version") or ".".join(map(str, version)))
        if version < MINIMUM_VERSION:
            raise UnsupportedServerVersionError(where, text, MINIMUM_TEXT, _WHY)
        return ServerInfo(text, transactions)
    wire = hello.get("maxWireVersion")
    if isinstance(wire, int) and wire < WIRE_VERSION_4_4:
        raise UnsupportedServerVersionError(where, f"older than 4.4 (wire version {wire})", MINIMUM_TEXT, _WHY)
    return ServerInfo(f"wire {wire}", transactions)
