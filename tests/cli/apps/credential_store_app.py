"""The instance form on a store whose ``display_url`` carries credentials (as a third-party
store might report it): the worker's start line must still not show the password."""

from __future__ import annotations

import os

from monque_engine import Job, Monque
from monque_engine.store.sqlite import SqliteStore

store = SqliteStore.from_url(os.environ["TEST_APP_URL"])
store.display_url = "mongodb://alice:" + os.environ["TEST_SECRET"] + "@db1:27017,db2:27017/app"
monque = Monque(store)


@monque.worker("noop")
async def noop(job: Job) -> None:
    return None
