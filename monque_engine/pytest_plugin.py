"""Pytest fixtures for applications that use Monque: test mode in a fixture (issue 38).

Installed with the package as the pytest plugin ``monque`` (entry point ``pytest11``). It
only defines fixtures, none of them autouse, and no hooks: a test that requests none of them
runs exactly as before (``-p no:monque`` leaves the plugin out altogether).

- ``monque_test_mode``: every ``Monque`` / ``SyncMonque`` of the process runs jobs inline
  while the test runs (``monque_engine.testing.test_mode``), including clients an
  application built at import time.
- ``monque_test_url``: a ``sqlite:///`` URL of a fresh file in the test's ``tmp_path``.
- ``monque_sync``: a ``SyncMonque`` on that URL in test mode, closed after the test.

An async test builds its own: ``async with Monque(monque_test_url, test_mode=True) as m:``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .sync import SyncMonque
from .testing import test_mode


@pytest.fixture
def monque_test_mode() -> Iterator[None]:
    """Jobs run inline at ``enqueue`` for every Monque and SyncMonque during the test."""
    with test_mode():
        yield


@pytest.fixture
def monque_test_url(tmp_path: Path) -> str:
    """A store of the test's own: a SQLite file in ``tmp_path``."""
    return f"sqlite:///{tmp_path / 'monque-test.db'}"


@pytest.fixture
def monque_sync(monque_test_url: str) -> Iterator[SyncMonque]:
    """A ``SyncMonque`` in test mode on ``monque_test_url``; register handlers on it."""
    client = SyncMonque(monque_test_url, test_mode=True)
    try:
        yield client
    finally:
        client.close()
