"""The queue from synchronous code: ``SyncMonque`` (client.py) on one background event loop
per process (loop.py)."""

from .client import SyncMonque

__all__ = ["SyncMonque"]
