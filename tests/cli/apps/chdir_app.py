"""An app whose setup changes the working directory (as some apps do at start-up), for the
test that a relative ``sqlite:///jobs.db`` keeps naming the file it named at open."""

from __future__ import annotations

import os

from monque_engine import Monque

from .worker_app import fast


def setup(monque: Monque) -> None:
    monque.register("fast", fast)
    os.chdir(os.environ["CHDIR_APP_TO"])
