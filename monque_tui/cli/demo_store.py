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
from typing import NamedTuple

from monque_engine import JobListFilter, Monque, MonqueError
from monque_engine.payload_filter import DataTerm
from monque_engine.store import locate_store
from monque_engine.store.urls import mask_url

from ..common.exitcodes import CliError, ExitCode

#: How many of the foreign names the refusal quotes.
SHOWN = 3


def foreign_names(names: Iterable[str], demo_names: Iterable[str]) -> list[str]:
    """The stored job names the demo did not make, sorted."""
    return sorted(set(names) - set(demo_names))


class _Stored(NamedTuple):
    names: list[str]
    #: Jobs without the demo's mark in their payload (made by something else, or by an older demo).
    unmarked: int


async def _stored(url: str, mark_key: str) -> _Stored | None:
    """The job names stored at ``url`` and how many jobs lack the demo's mark (a server was
    pinged by ``check_url`` just before)."""
    monque = Monque(url, recover_stale_jobs=False)
    try:
        await monque.initialize()
    except (MonqueError, ValueError, OSError):
        return None  # the demo's own start reports what is wrong with the store
    try:
        names = list(await monque.store.names())
        unmarked = await monque.count_jobs(JobListFilter(data=(DataTerm((mark_key,), "missing"),))) if names else 0
        return _Stored(names, unmarked)
    finally:
        await monque.close()


def refuse_foreign_store(url: str, demo_names: Iterable[str], mark_key: str, default_url: str) -> None:
    """Raise ``CliError`` (exit 2) when the store at ``url`` holds jobs the demo did not make:
    of names it does not handle, or without its mark (``demo.app.DEMO_MARK_KEY``): an
    application's ``email.send`` jobs have the demo's name, not its mark."""
    location = locate_store(url)
    if location.kind == "sqlite" and not (location.exists and location.collections):
        return  # a new file, or one without Monque's tables: nothing there to harm
    stored = asyncio.run(_stored(url, mark_key))
    if stored is None:
        return
    foreign = foreign_names(stored.names, demo_names)
    if foreign:
        shown = ", ".join(repr(name) for name in foreign[:SHOWN]) + (", ..." if len(foreign) > SHOWN else "")
        what = f"jobs that are not the demo's (names {shown})"
    elif stored.unmarked:
        what = (
            f"{stored.unmarked:,} job(s) the demo did not make (its names, without its mark: "
            f"data.{mark_key} missing; or made by an older version's demo)"
        )
    else:
        return
    raise CliError(
        f"--demo: {mask_url(url)} holds {what}; the demo runs its handlers on a store and deletes its "
        "completed and failed jobs after 10 min / 1 h, so it needs one of its own: "
        f"drop the URL (it uses {default_url}) or name a new file",
        ExitCode.USAGE,
    )


__all__ = ["foreign_names", "refuse_foreign_store"]
