"""Handlers for the console soak (``bench.tui_bench --soak``): four names, 2 ms async handlers."""

from __future__ import annotations

import asyncio
from typing import Any

NAMES = ("email.send", "image.resize", "report.build", "webhook.deliver")


async def _work(job: Any) -> None:
    await asyncio.sleep(0.002)


def setup(monque: Any) -> None:
    for name in NAMES:
        monque.register(name, _work)
