"""``--demo URL`` refuses a store that holds someone's real jobs.

The demo is not a viewer: it registers handlers for ``email.send``, ``image.resize``,
``report.generate``, ``webhook.deliver`` and ``metrics.rollup`` (which then "complete" any
job of those names without doing its work), and it runs with job retention, which deletes
every completed job older than 10 minutes and every failed one older than an hour, of
*every* name. ``monque-tui --demo sqlite:///jobs.db`` on an application's store deleted its
failed jobs within seconds (probe-cli). MONQUE_URL was already ignored by ``--demo`` for
this reason; a URL on the command line is now looked at first, and a store holding jobs of
any other name is refused before anything runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from monque_engine import Monque, MonqueError
from monque_engine.store import locate_store
from monque_engine.store.urls import mask_url

from ..common.exitcodes import CliError, ExitCode

#: How many of the foreign names the refusal quotes.
SHOWN = 3


def foreign_names(names: Iterable[str], demo_names: Iterable[str]) -> list[str]:
    """The stored job names the demo did not make, sorted."""
    return sorted(set(names) - set(demo_names))


async def _stored_names(url: str) -> list[str] | None:
    """The job names stored at ``url`` (a server was pinged by ``check_url`` just before)."""
    monque = Monque(url, recover_stale_jobs=False)
    try:
        await monque.initialize()
    except (MonqueError, ValueError, OSError):
        return None  # the demo's own start reports what is wrong with the store
    try:
        return list(await monque.store.names())
    finally:
        await monque.close()


def refuse_foreign_store(url: str, demo_names: Iterable[str], default_url: str) -> None:
    """Raise ``CliError`` (exit 2) when the store at ``url`` holds jobs the demo did not make."""
    location = locate_store(url)
    if location.kind == "sqlite" and not (location.exists and location.collections):
        return  # a new file, or one without Monque's tables: nothing there to harm
    names = asyncio.run(_stored_names(url))
    foreign = foreign_names(names or (), demo_names)
    if not foreign:
        return
    shown = ", ".join(repr(name) for name in foreign[:SHOWN]) + (", ..." if len(foreign) > SHOWN else "")
    raise CliError(
        f"--demo: {mask_url(url)} holds jobs that are not the demo's (names {shown}); the demo runs its handlers "
        "on a store and deletes its completed and failed jobs after 10 min / 1 h, so it needs one of its own: "
        f"drop the URL (it uses {default_url}) or name a new file",
        ExitCode.USAGE,
    )


__all__ = ["foreign_names", "refuse_foreign_store"]
