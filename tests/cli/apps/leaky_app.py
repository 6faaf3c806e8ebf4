"""An app whose code logs and raises with a password-bearing URL in the text, as real apps do."""

from __future__ import annotations

import logging
import os

from monque_engine import Job, Monque

SECRET_URL = "mongodb://alice:" + os.environ.get("TEST_SECRET", "s3cr3t-pw") + "@db1:27017,db2:27017/app"
log = logging.getLogger("leaky_app")


def setup(monque: Monque) -> None:
    log.warning("connecting the reporting side to %s", SECRET_URL)
    try:
        raise RuntimeError(f"cannot reach {SECRET_URL}")
    except RuntimeError:
        log.exception("reporting side unavailable")
    monque.register("noop", noop)


async def noop(job: Job) -> None:
    return None
