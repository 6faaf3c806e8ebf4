"""``python manage.py monque_worker``: run this project's handlers until SIGTERM or SIGINT.

In the Django process, so handlers use the ORM and settings as views do. Stops gracefully:
no new claims, running jobs get ``shutdown_timeout`` (30 s) to finish, then exit 0. A store
that cannot be opened is one line on stderr and exit 3, a bad ``MONQUE_URL`` exit 2, as
``monque-tui --worker`` (so a process manager's restart rules read the same codes).
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from monque_engine import ConnectionError, InvalidOptionError, InvalidStoreUrlError, Monque

from ... import tasks


class Command(BaseCommand):
    help = "Run this project's Monque job handlers until SIGTERM or SIGINT."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            asyncio.run(run_worker(settings.MONQUE_URL, self.stdout.write))
        except (InvalidStoreUrlError, InvalidOptionError) as error:
            raise CommandError(f"MONQUE_URL: {error}", returncode=2) from None
        except ConnectionError as error:  # the message masks a MongoDB password
            raise CommandError(str(error), returncode=3) from None


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
