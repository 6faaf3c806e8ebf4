"""The project's one ``SyncMonque`` per store URL (``settings.MONQUE_URL``), built on first use.

Views call ``queue()``; a client is safe from every thread of the server and across the
pre-fork of gunicorn or uWSGI (a forked worker opens its own connection on first use).
"""

from __future__ import annotations

import threading

from django.conf import settings

from monque_engine import SyncMonque

from . import tasks

_clients: dict[str, SyncMonque] = {}
_lock = threading.Lock()


def queue() -> SyncMonque:
    url: str = settings.MONQUE_URL
    with _lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = SyncMonque(url)
            tasks.register(client)  # run inline in test mode only
        return client
