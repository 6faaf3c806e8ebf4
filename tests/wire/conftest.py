"""Fixtures for the driver-level tests: a started ``WireServer``, stopped after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from wire.server import WireServer


@pytest.fixture
async def wire_server() -> AsyncIterator[WireServer]:
    """A replica-set primary by default; change ``wire_server.hello`` before connecting."""
    async with WireServer() as server:
        yield server
