"""``python manage.py monque_worker``: run this project's handlers until SIGTERM or SIGINT.

In the Django process, so handlers use the ORM and settings as views do. Stops gracefully:
no new claims, running jobs get ``shutdown_timeout`` (30 s) to finish, then exit 0.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from monque_engine import Monque

from ... import tasks


class Command(BaseCommand):
    help = "Run this project's Monque job handlers until SIGTERM or SIGINT."

    def handle(self, *args: Any, **options: Any) -> None:
        asyncio.run(run_worker(settings.MONQUE_URL, self.stdout.write))


async def run_worker(url: str, say: Any) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with Monque(url) as monque:
        tasks.register(monque)
        await monque.start()
        say(f"monque worker running {', '.join(monque.registered_names)} on {monque.display_url}")
        await stop.wait()
        await monque.stop()
