"""An app whose worker dies while starting, every time, as a crash in a C extension would:
what the supervisor of ``--processes`` must stop restarting."""

from __future__ import annotations

import os

from monque_engine import Monque


def setup(monque: Monque) -> None:
    os._exit(1)
