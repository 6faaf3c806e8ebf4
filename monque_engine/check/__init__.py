"""``monque-tui check``: what a store offers Monque, checked before a deploy (issue 36).

``check_store(url, collection)`` returns a report, a list of ``CheckLine`` (ok / warn / fail,
what was found, what to do), with the URL's password masked in every line. On MongoDB it
reads the server's version, topology, members and lag, clock skew, oplog window, the jobs
collection's indexes and size, and the owners of processing jobs missing from the instance
registry; it tries a change stream and a transaction on one temporary collection it drops
again (``mongo.py``). On SQLite it reads the file's header and says what is MongoDB's
(``sqlite.py``). Nothing here imports the console.
"""

from __future__ import annotations

from .lines import MIXED_FLEET_RULE, MIXED_FLEET_RULE_SHORT, CheckLine, Verdict, worst


async def check_store(
    url: str, collection: str, *, connect_timeout_s: float = 5.0, retention: bool = False
) -> list[CheckLine]:
    """The report for the store ``url`` names; ``ConnectionError`` when a server cannot be reached
    at all, ``InvalidStoreUrlError`` for a URL no store can use. ``retention``: the retention
    index is required too (workers with ``job_retention``)."""
    if url.strip().lower().startswith("sqlite:"):
        from .sqlite import check_sqlite

        return check_sqlite(url, collection)
    from ..store.mongo.config import mask_password, parse_mongo_url
    from .mongo import MongoCheck

    settings = parse_mongo_url(url)
    lines = await MongoCheck(settings, collection, connect_timeout_s=connect_timeout_s, retention=retention).run()
    return [line.masked(lambda text: mask_password(text, url)) for line in lines]


__all__ = ["MIXED_FLEET_RULE", "MIXED_FLEET_RULE_SHORT", "CheckLine", "Verdict", "check_store", "worst"]
