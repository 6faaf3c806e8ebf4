"""Test mode: jobs run inline, at ``enqueue``, so an application's own tests see their outcome
(issue 38; Celery's ``task_always_eager``, huey's ``immediate``, RQ's ``is_async=False``).

Two ways in:

- ``Monque(url, test_mode=True)`` (or ``SyncMonque(url, test_mode=True)``): that instance.
- ``with monque_engine.testing.test_mode():`` (what the pytest plugin's ``monque_test_mode``
  fixture does): every ``Monque`` and ``SyncMonque`` of the process while the block runs,
  including ones an application built at import time, so its code needs no change for tests.

Under test mode ``enqueue`` (and ``now``, each due item of ``enqueue_many``) stores the job as
usual, then claims and runs it here and now through the worker's own code path, so the job
ends as a worker would leave it: completed with its ``result``, or failed with its reason,
``failCount`` and attempt history, a failure with retries left run again at once (the backoff
is not waited for) until it completes or fails for good. The call returns the job in that
final state. A job due later, and a ``schedule``d one, is stored and not run:
``run_job(job_id)`` runs one now. A name with no handler registered stays pending, as it
would with no worker running. ``start()`` does nothing (there is no worker to start), so an
application that starts its worker at start-up runs unchanged in its tests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0


@contextmanager
def test_mode() -> Iterator[None]:
    """Every Monque and SyncMonque of this process runs jobs inline while the block runs."""
    global _active
    with _lock:
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1


def test_mode_active() -> bool:
    """Whether a ``test_mode()`` block is running (in any thread of the process)."""
    return _active > 0


# Not a test for pytest to collect, whatever the module that imports it is called.
test_mode.__test__ = False  # type: ignore[attr-defined]
test_mode_active.__test__ = False  # type: ignore[attr-defined]
