"""The huey side of ``bench.processes``: the same 2 ms CPU handler as a huey task, on a
``SqliteHuey`` at its best (WAL, synchronous=NORMAL, as ``bench.huey_peer``'s like-for-like),
for ``huey_consumer bench.processes_huey.huey -k process|thread -w N``. The file comes from
``BENCH_HUEY_FILE``. Each task returns its finish time, which huey keeps as its result: the
count of results is how many ran."""

from __future__ import annotations

import os

from huey import SqliteHuey

from .burn import burn
from .huey_peer import _storage_class

huey = SqliteHuey(
    "bench-processes",
    filename=os.environ.get("BENCH_HUEY_FILE", "huey-processes.db"),
    storage_class=_storage_class("normal"),
)


@huey.task()
def cpu(i: int) -> int:
    burn()
    return i + 1  # a result (huey keeps none for None)
